//! Window arithmetic and ceremony slots.
//!
//! `t = floor((now − genesis) / window_ms)`. A window's challenges can be answered until
//! `end(t) + grace`; after that the window is closed: summaries are signed and secrets revealed.
//! With `global` or `staggered` slots, challenges may be requested only inside a slot placed by
//! the window's *beacon* ([`slot_beacon`]): the two latest certified roots before `t − 1`
//! ([`BEACON_LAG`]), which are unknown until those windows close, so a slot cannot be planned
//! more than about a window ahead, and one person cannot sit in two global slots at once. Every
//! member holds those certificates when `t` starts, so all place the slot the same way and it
//! does not move when `t − 1`'s certificate arrives.
//!
//! Until the network has certified any window (its first windows after genesis, or a committee
//! that certified nothing for a long time) the beacon is derived from the parameters and `t`
//! alone: those slots are predictable, and a deployment should not gate anything on them.

use std::ops::Range;

use crate::{Digest, IdentityId, NetworkParams, Reason, SlotMode, Timestamp};

impl NetworkParams {
    /// The window containing `now`.
    pub fn window_at(&self, now: Timestamp) -> Result<u64, Reason> {
        if now < self.genesis_ms {
            return Err(Reason::BeforeGenesis {
                genesis: self.genesis_ms,
            });
        }
        Ok((now - self.genesis_ms) / self.window_ms)
    }

    /// Start of window `t`.
    pub fn window_start(&self, t: u64) -> Timestamp {
        self.genesis_ms
            .saturating_add(t.saturating_mul(self.window_ms))
    }

    /// End (exclusive) of window `t`.
    pub fn window_end(&self, t: u64) -> Timestamp {
        self.window_start(t.saturating_add(1))
    }

    /// When window `t` closes: its end plus the grace period.
    pub fn closes_at(&self, t: u64) -> Timestamp {
        self.window_end(t).saturating_add(self.grace_ms)
    }

    /// Whether responses for window `t` are still accepted at `now`.
    pub fn window_open(&self, t: u64, now: Timestamp) -> Result<(), Reason> {
        if now >= self.window_start(t) && now < self.closes_at(t) {
            Ok(())
        } else {
            Err(Reason::WrongWindow {
                t,
                current: self.window_at(now).unwrap_or(0),
            })
        }
    }

    /// The ceremony slot of `id` in window `t`, placed by the window's beacon.
    pub fn slot(&self, t: u64, id: &IdentityId, beacon: &Digest) -> Range<Timestamp> {
        let start = self.window_start(t);
        let end = self.window_end(t);
        let place = |tag: &[u8]| -> Range<Timestamp> {
            // The slot starts after the grace period, when the previous certificate exists.
            let room = self.window_ms - self.slot_ms - self.grace_ms + 1;
            let mut hasher = blake3::Hasher::new_derive_key("hco ceremony slot v1");
            hasher
                .update(&beacon.0)
                .update(&t.to_be_bytes())
                .update(tag);
            let draw = u64::from_le_bytes(
                hasher.finalize().as_bytes()[..8]
                    .try_into()
                    .unwrap_or([0; 8]),
            );
            let offset = self.grace_ms + draw % room;
            start + offset..start + offset + self.slot_ms
        };
        match self.slot_mode {
            SlotMode::Open => start..end,
            SlotMode::Global => place(b"global"),
            SlotMode::Staggered => place(&id.0),
        }
    }
}

/// How many windows back the beacon looks for certified roots.
pub const BEACON_LOOKBACK: u64 = 64;
/// The beacon of `t` uses certified windows before `t − BEACON_LAG` only: those certified a
/// whole window before `t` starts, which every member holds when `t`'s slot opens.
pub const BEACON_LAG: u64 = 1;

/// The beacon that places the slots of window `t`: the latest two certified roots of windows
/// before `t − 1` (at most [`BEACON_LOOKBACK`] back; [`BEACON_LAG`]), each with its window, mixed with `t` and the
/// parameter digest. Every committee member that holds the same certificates computes the same
/// beacon, and no member alone decides a certified root. With no certificate at all it is a
/// function of the parameters and `t` (the genesis windows: predictable, see the module docs).
pub fn slot_beacon(t: u64, params: &Digest, roots: &[(u64, Digest)]) -> Digest {
    let mut hasher = blake3::Hasher::new_derive_key("hco slot beacon v1");
    hasher.update(&t.to_be_bytes()).update(&params.0);
    for (window, root) in roots.iter().take(2) {
        hasher.update(&window.to_be_bytes()).update(&root.0);
    }
    Digest(*hasher.finalize().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeId;
    use crate::testing::params_for;

    #[test]
    fn windows_tile_time() {
        let p = params_for(&[NodeId([1; 32])]);
        assert!(p.window_at(p.genesis_ms - 1).is_err());
        assert_eq!(p.window_at(p.genesis_ms).unwrap(), 0);
        assert_eq!(p.window_at(p.window_end(0) - 1).unwrap(), 0);
        assert_eq!(p.window_at(p.window_end(0)).unwrap(), 1);
        assert!(p.window_open(0, p.closes_at(0) - 1).is_ok());
        assert_eq!(
            p.window_open(0, p.closes_at(0)).unwrap_err().code(),
            "wrong_window"
        );
        assert_eq!(
            p.window_open(1, p.window_start(1) - 1).unwrap_err().code(),
            "wrong_window"
        );
    }

    #[test]
    fn slots_fall_inside_the_window_after_grace_and_move_with_the_root() {
        let mut p = params_for(&[NodeId([1; 32])]);
        p.slot_mode = SlotMode::Staggered;
        p.slot_ms = p.window_ms / 4;
        let id = IdentityId([9; 32]);
        let mut starts = std::collections::BTreeSet::new();
        for r in 0..50u8 {
            for t in 0..4 {
                let s = p.slot(t, &id, &Digest([r; 32]));
                assert!(s.start >= p.window_start(t) + p.grace_ms);
                assert!(s.end <= p.window_end(t));
                assert_eq!(s.end - s.start, p.slot_ms);
                starts.insert(s.start - p.window_start(t));
            }
        }
        assert!(
            starts.len() > 20,
            "slot placement should vary with the root"
        );
        p.slot_mode = SlotMode::Global;
        let a = p.slot(3, &IdentityId([1; 32]), &Digest([5; 32]));
        let b = p.slot(3, &IdentityId([2; 32]), &Digest([5; 32]));
        assert_eq!(a, b, "a global slot is the same for everyone");
    }
}
