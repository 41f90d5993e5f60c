//! The `stretch-prompts` fault: the member gives the touch prompts it issues the widest span
//! the other members still accept, as a member colluding with one person would, so that the
//! person's touches for its prompts need not fall inside their reaction windows.
//!
//! - **Served early.** A prompt opens on its beat at a secret moment up to `prompt_jitter`
//!   after the beat starts. Asked before that moment, the member issues it anyway, dated at the
//!   moment (so the audit, which re-derives the moment, finds nothing): the person may touch
//!   from the beat's start, once the witnessing member has published.
//! - **Accepted late.** An answer that reaches it after the prompt's deadline but at most one
//!   relay round after (less [`GOSSIP_MARGIN_MS`], so that the acceptance still reaches the
//!   others within the round) is verified as of the deadline, and an answer sooner than the
//!   family's floor as of the floor: the acceptance is dated inside the bounds every check
//!   reads, and gossiped as usual.
//!
//! Nothing else changes, and nothing it does is refused or leaves evidence: this is the most a
//! lone member can give its person under the witness rule (`hco_oracle::witness`), the case
//! `hco sim bound` prices as `identities_per_person_one_malicious_member`.

use hco_oracle::{Response, Timestamp};

use super::{Fault, active};
use crate::network::protocol::ChallengeReply;
use crate::service::Node;

/// How long before its deadline plus a relay round the member stops accepting, so that its
/// acceptance reaches the other members within the round, milliseconds.
pub const GOSSIP_MARGIN_MS: u64 = 500;

/// The moment to issue at instead of `now`, for a step that opens at `opens_at`: the opening
/// itself when it is at most a prompt's jitter ahead (a phase's opening is served as early too;
/// only a prompt, whose opening is secret, gains from it).
pub(super) fn serve_early(node: &Node, opens_at: Timestamp, now: Timestamp) -> Option<Timestamp> {
    if !active(Fault::StretchPrompts) {
        return None;
    }
    let jitter = node.oracle.params().prompt_jitter_ms;
    (opens_at > now && opens_at - now <= jitter).then_some(opens_at)
}

/// The moment to verify an answer that came at `now` as of, for a prompt whose floor and
/// deadline are given: the floor when it is early, the deadline when it is late by less than a
/// relay round (less the margin); `None` when it is on time (the honest path) or too late.
fn dated(
    now: Timestamp,
    floor: Timestamp,
    deadline: Timestamp,
    round_ms: u64,
) -> Option<Timestamp> {
    let last = (deadline + round_ms).saturating_sub(GOSSIP_MARGIN_MS);
    let at = now.clamp(floor.min(deadline), deadline);
    (at != now && now <= last).then_some(at)
}

/// With `stretch-prompts`: verifies an answer to one of this member's touch prompts that came
/// after its deadline (within a relay round) or before its floor, as of the deadline or the
/// floor; `None` leaves it to the honest path.
pub(super) async fn verify_stretched(node: &Node, response: &Response) -> Option<ChallengeReply> {
    if !active(Fault::StretchPrompts) {
        return None;
    }
    let c = &response.challenge.challenge;
    // A prompt of this member's (only touch prompts carry a beat witness).
    if c.issuer != node.oracle.node_id() || c.witness.is_none() {
        return None;
    }
    let params = node.oracle.params();
    let now = node.now();
    let floor = c.issued_at + params.min_solve_ms(&c.family);
    let at = dated(now, floor, c.deadline, params.relay_round_ms)?;
    tracing::warn!(
        id = %c.id,
        j = c.j,
        late_ms = now.saturating_sub(c.deadline),
        "unsafe byzantine: answering a touch prompt as of {at} (now {now})"
    );
    let oracle = node.oracle.clone();
    let responses = vec![response.clone()];
    let verdict = tokio::task::spawn_blocking(move || oracle.verify_responses(&responses, at))
        .await
        .ok()?
        .ok()?
        .pop()?;
    Some(match verdict {
        Ok(sealed) => {
            node.publish_acceptances(vec![sealed.clone()]);
            ChallengeReply::Accepted(Box::new(sealed))
        }
        Err(reason) => ChallengeReply::Rejected((&reason).into()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_dated_inside_their_bounds_up_to_a_round_late() {
        // Floor 1_500, deadline 7_000, a 5 s round: accepted until 11_500.
        let d = |now| dated(now, 1_500, 7_000, 5_000);
        assert_eq!(d(1_000), Some(1_500), "early: as of the floor");
        assert_eq!(d(4_000), None, "on time: the honest path");
        assert_eq!(d(7_000), None);
        assert_eq!(d(7_001), Some(7_000), "late: as of the deadline");
        assert_eq!(d(11_500), Some(7_000));
        assert_eq!(
            d(11_501),
            None,
            "past the round: it would reach the others too late"
        );
    }
}
