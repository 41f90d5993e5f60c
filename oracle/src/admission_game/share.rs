//! Which questions of a window's game sets each committee member may show.
//!
//! Every member runs its own game over the same game sets, and its retirements are its own: if
//! every member could show every question, a script playing all `n` members would get `n` failed
//! looks at a question per window (one at each, in sequence or at once), not one. So the
//! questions are dealt out: question `q` of part `p` of set `s` belongs to member
//! `(q + r(s, p)) mod n`, `r` a public rotation hashed from the set and the part, and a member
//! draws sessions only from its own share. The shares are disjoint and together cover every
//! question, so committee-wide a question meets at most one failed session per window, with no
//! message between members; a part with `Q ≥ n` questions gives each member at least
//! `⌊Q / n⌋` of them. A member whose share misses some part of every game set serves no
//! session (`game_not_here`): size the game sets (`sets_per_window`, questions per part) to
//! the committee.

use serde::{Deserialize, Serialize};

/// One member's share of every window's game questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Share {
    /// The member's position in the committee (`0..members`).
    pub index: u32,
    /// The committee's size.
    pub members: u32,
}

impl Default for Share {
    /// A committee of one: every question.
    fn default() -> Self {
        Self {
            index: 0,
            members: 1,
        }
    }
}

impl Share {
    /// The share of the member at `index` of a committee of `members`; `None` when `index`
    /// is not a position of it.
    pub fn of(index: usize, members: usize) -> Option<Self> {
        (index < members).then_some(Self {
            index: index as u32,
            members: members as u32,
        })
    }

    /// Whether question `q` of part `part` of set `set` is this member's to show.
    pub fn holds(&self, set: &str, part: usize, q: usize) -> bool {
        let n = u64::from(self.members.max(1));
        let mut h = blake3::Hasher::new_derive_key("hco game question share v1");
        h.update(&(set.len() as u64).to_le_bytes())
            .update(set.as_bytes())
            .update(&(part as u64).to_le_bytes());
        let rotation =
            u64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().unwrap_or([0; 8]));
        (q as u64).wrapping_add(rotation % n) % n == u64::from(self.index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_are_disjoint_cover_every_question_and_are_even() {
        for members in 1..=7usize {
            let shares: Vec<Share> = (0..members)
                .map(|i| Share::of(i, members).unwrap())
                .collect();
            for set in ["a", "b", "starter-03"] {
                for part in 0..3 {
                    let questions = 10;
                    let mut counts = vec![0; members];
                    for q in 0..questions {
                        let holders: Vec<usize> = (0..members)
                            .filter(|&i| shares[i].holds(set, part, q))
                            .collect();
                        assert_eq!(holders.len(), 1, "{set}/{part}/{q} among {members}");
                        counts[holders[0]] += 1;
                    }
                    // Dealt in turn: every member gets ⌊Q/n⌋ or one more.
                    for c in counts {
                        assert!((questions / members..=questions / members + 1).contains(&c));
                    }
                }
            }
        }
        assert_eq!(Share::of(3, 3), None);
        assert!(Share::default().holds("any", 2, 99));
    }

    #[test]
    fn the_rotation_differs_between_parts_and_sets() {
        // Not every part's first question goes to member 0 (it would leave the others the
        // leftovers of every part).
        let first: Vec<u32> = (0..12)
            .flat_map(|s| (0..3).map(move |p| (format!("set-{s}"), p)))
            .map(|(s, p)| {
                (0..4)
                    .find(|&i| Share::of(i, 4).unwrap().holds(&s, p, 0))
                    .unwrap() as u32
            })
            .collect();
        assert!((0..4).all(|i| first.contains(&i)), "{first:?}");
    }
}
