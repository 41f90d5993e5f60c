//! The key of a challenge played live (a family whose page streams it from the node, such as
//! `attention`): the node's stream endpoint asks for it when the identity opens the stream. The
//! same checks as an answer's, up to the verdict: our own issued envelope, the window open, the
//! deadline not passed, the identity registered and its signature over the stream's digest, and
//! no answer yet. Nothing is written.

use hco_challenges::AnswerKey;

use crate::secret::{derive_challenge, window_secret};
use crate::{Digest, Reason, Sig, SignedChallenge, Timestamp, sign};

use super::{Oracle, Outcome};

/// The domain of the identity's signature that opens a challenge's stream.
pub const STREAM_DOMAIN: &str = "hco live stream v1";

/// What the identity signs to open the stream of the challenge `challenge_id`.
pub fn stream_digest(challenge_id: &Digest) -> Digest {
    sign::digest(STREAM_DOMAIN, &[&challenge_id.0])
}

impl Oracle {
    /// The answer key of `signed`, for its stream, if it may be played now: refused as for an
    /// answer (`unknown_challenge`, `challenge_expired`, `already_answered`,
    /// `bad_identity_signature`, …), and `unknown_family` unless its family is `family`.
    pub fn live_key(
        &self,
        signed: &SignedChallenge,
        sig: &Sig,
        family: &str,
        now: Timestamp,
    ) -> Outcome<AnswerKey> {
        let c = &signed.challenge;
        if c.family != family {
            return Ok(Err(Reason::UnknownFamily(c.family.clone())));
        }
        let challenge_id = match self.check_ours(signed)? {
            Ok(id) => id,
            Err(reason) => return Ok(Err(reason)),
        };
        if let Err(reason) = self.params.window_open(c.t, now) {
            return Ok(Err(reason));
        }
        if now > c.deadline {
            return Ok(Err(Reason::ChallengeExpired {
                now,
                deadline: c.deadline,
            }));
        }
        let Some(profile) = self.profile_of(&c.id)? else {
            return Ok(Err(Reason::UnknownIdentity));
        };
        let key = self.keys.key(&c.id);
        let digest = stream_digest(&challenge_id);
        if !sign::verify_many_parsed(&[(key.as_ref(), &digest, sig)])[0] {
            return Ok(Err(Reason::BadIdentitySignature));
        }
        if self.is_answered(c.t, &c.id, c.j)? {
            return Ok(Err(Reason::AlreadyAnswered));
        }
        let w_t = window_secret(&self.node_secret, c.t);
        Ok(derive_challenge(
            &self.params,
            &self.registry,
            &w_t,
            profile,
            &c.id,
            c.t,
            c.j,
            &c.family,
        )
        .map(|(_, generated)| generated.key))
    }
}
