//! A challenge request's identity signature, checked once: one request at a time, or a batch
//! of them with one batched verification. The gateway checks before it charges the identity's
//! rate limit and hands the [`CheckedRequest`] on, so issuance does not check it again.

use crate::messages::check_version;
use crate::{Digest, Reason, SignedRequest};

use super::Oracle;

/// A challenge request whose identity signature this oracle checked
/// ([`Oracle::check_request_signature`]). A gateway that must know the signature is good before
/// it charges the identity's rate limit passes this on, and issuance does not check it again.
#[derive(Debug, Clone)]
pub struct CheckedRequest(SignedRequest);

impl CheckedRequest {
    /// The request.
    pub fn request(&self) -> &SignedRequest {
        &self.0
    }

    /// The request, for a peer (which checks it itself).
    pub fn into_request(self) -> SignedRequest {
        self.0
    }
}

impl Oracle {
    /// Checks the identity signature of a challenge request (version, key, signature).
    pub fn check_request_signature(&self, req: SignedRequest) -> Result<CheckedRequest, Reason> {
        self.check_signature_of(&req)?;
        Ok(CheckedRequest(req))
    }

    /// [`Oracle::check_request_signature`] for many requests at once, in order: one batched
    /// signature verification when every signature is good (about half the cost of checking
    /// them one by one), one by one otherwise to find the bad ones.
    pub fn check_request_signatures(
        &self,
        reqs: Vec<SignedRequest>,
    ) -> Vec<Result<CheckedRequest, Reason>> {
        let keys: Vec<_> = reqs.iter().map(|r| self.keys.key(&r.body.id)).collect();
        let digests: Vec<Digest> = reqs
            .iter()
            .map(|r| SignedRequest::signing_digest(&r.body))
            .collect();
        // Requests of an unknown message version are refused by their version, unchecked.
        let items: Vec<_> = reqs
            .iter()
            .zip(&keys)
            .zip(&digests)
            .map(|((r, key), digest)| {
                let key = key
                    .as_ref()
                    .filter(|_| check_version(r.body.version).is_ok());
                (key, digest, &r.sig)
            })
            .collect();
        let good = crate::sign::verify_many_parsed(&items);
        reqs.into_iter()
            .zip(good)
            .map(|(req, good)| {
                check_version(req.body.version)?;
                if good {
                    Ok(CheckedRequest(req))
                } else {
                    Err(Reason::BadIdentitySignature)
                }
            })
            .collect()
    }

    pub(super) fn check_signature_of(&self, req: &SignedRequest) -> Result<(), Reason> {
        // Parsing the key here also warms the cache for the response that follows.
        let key = self
            .keys
            .key(&req.body.id)
            .ok_or(Reason::BadIdentitySignature)?;
        req.check_signature_with(&key)
    }
}
