//! The light verifier: checks a window certificate against the committee's keys and an
//! identity's membership proof. No ledger, no network, no clock, no allocator beyond `alloc`:
//! this is what a chain's runtime, a contract or a DAO voting tool embeds. It also checks that
//! an external account was linked to an identity active in a window
//! ([`LightVerifier::verify_linked`]).

use alloc::collections::BTreeSet;
use alloc::vec::Vec;
use core::fmt;

use crate::account::{AccountError, AccountId};
use crate::certificate::{MembershipProof, WindowCertificate, member_leaf};
use crate::link::LinkProof;
use crate::{Class, Digest, IdentityId, NodeId, sign};

/// Why a certificate or proof does not verify. Codes are stable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CertError {
    /// A signer outside the committee.
    NotInCommittee(NodeId),
    /// The same signer twice.
    DuplicateSigner(NodeId),
    /// A signature that does not verify.
    BadSignature(NodeId),
    /// Fewer valid signers than the quorum.
    BelowQuorum {
        /// Valid signers.
        got: usize,
        /// Needed.
        quorum: u32,
    },
    /// The certificate is for other network parameters.
    ParamsMismatch,
    /// The proof does not place the identity under the root.
    NotIncluded(IdentityId),
    /// The identity was active, but as the other class.
    WrongClass {
        /// The identity.
        id: IdentityId,
        /// The class certified.
        certified: Class,
        /// The class asked about.
        expected: Class,
    },
    /// A quorum that is not a strict majority of the committee (a verifier with quorum 0 would
    /// accept a certificate without a signature), or a committee listing a key twice.
    BadQuorum {
        /// The quorum asked for.
        quorum: u32,
        /// Distinct committee members.
        committee: usize,
    },
    /// The proof's tree size differs from the certified count.
    CountMismatch {
        /// Leaf count in the proof.
        proof: u64,
        /// Certified count.
        certified: u64,
    },
    /// The account id asked about is refused: its code is the [`AccountError`]'s
    /// (`malformed_account`, `unsupported_namespace`, `bad_checksum`).
    Account(AccountError),
    /// The link proof does not place `(account, identity)` under the certificate's
    /// `links_root`: another account's or identity's proof, another window's, or a tampered
    /// one.
    LinkNotInWindow {
        /// The account (canonical).
        account: AccountId,
        /// The identity asked about.
        id: IdentityId,
    },
}

impl CertError {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            CertError::NotInCommittee(_) => "not_in_committee",
            CertError::DuplicateSigner(_) => "duplicate_signer",
            CertError::BadSignature(_) => "bad_signature",
            CertError::BelowQuorum { .. } => "below_quorum",
            CertError::ParamsMismatch => "params_mismatch",
            CertError::NotIncluded(_) => "not_included",
            CertError::CountMismatch { .. } => "count_mismatch",
            CertError::WrongClass { .. } => "wrong_class",
            CertError::BadQuorum { .. } => "bad_quorum",
            CertError::Account(e) => e.code(),
            CertError::LinkNotInWindow { .. } => "link_not_in_window",
        }
    }
}

impl fmt::Display for CertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertError::NotInCommittee(n) => write!(f, "signer {n} is not in the committee"),
            CertError::DuplicateSigner(n) => write!(f, "signer {n} appears twice"),
            CertError::BadSignature(n) => write!(f, "the signature of {n} does not verify"),
            CertError::BelowQuorum { got, quorum } => {
                write!(f, "{got} signers, quorum is {quorum}")
            }
            CertError::ParamsMismatch => {
                f.write_str("the certificate was made under other network parameters")
            }
            CertError::NotIncluded(id) => {
                write!(f, "the proof does not show {id} in the active set")
            }
            CertError::WrongClass {
                id,
                certified,
                expected,
            } => write!(f, "{id} was active as {certified:?}, not as {expected:?}"),
            CertError::BadQuorum { quorum, committee } => write!(
                f,
                "quorum {quorum} is not a strict majority of a committee of {committee} distinct members"
            ),
            CertError::CountMismatch { proof, certified } => write!(
                f,
                "the proof is for a set of {proof} identities, the certificate has {certified}"
            ),
            CertError::Account(e) => write!(f, "the account: {e}"),
            CertError::LinkNotInWindow { account, id } => write!(
                f,
                "the link proof does not show {account} linked to {id} in the certified window"
            ),
        }
    }
}

impl core::error::Error for CertError {}

/// What a consumer trusts: the committee's keys, the quorum, and optionally the parameter digest.
#[derive(Debug, Clone)]
pub struct LightVerifier {
    committee: Vec<NodeId>,
    quorum: u32,
    params: Option<Digest>,
}

impl LightVerifier {
    /// A verifier for a committee and quorum: `bad_quorum` unless the committee lists distinct
    /// keys and the quorum is a strict majority of them (`n/2 < quorum ≤ n`). The quorum is the
    /// number in `GET /v1/params` (`params.quorum`), never a config file's `0`.
    pub fn new(committee: Vec<NodeId>, quorum: u32) -> Result<Self, CertError> {
        let distinct: BTreeSet<_> = committee.iter().collect();
        let n = committee.len();
        if distinct.len() != n || !(n / 2 < quorum as usize && quorum as usize <= n) {
            return Err(CertError::BadQuorum {
                quorum,
                committee: distinct.len(),
            });
        }
        Ok(Self {
            committee,
            quorum,
            params: None,
        })
    }

    /// Also require the certificate to name these network parameters.
    pub fn with_params(mut self, params: Digest) -> Self {
        self.params = Some(params);
        self
    }

    /// Checks the certificate: distinct committee signers, valid signatures, at least a quorum.
    pub fn verify_certificate(&self, cert: &WindowCertificate) -> Result<(), CertError> {
        if self.params.is_some_and(|p| p != cert.summary.params) {
            return Err(CertError::ParamsMismatch);
        }
        let digest = cert.summary.signing_digest();
        let mut seen = BTreeSet::new();
        for (signer, _) in &cert.signatures {
            if !self.committee.contains(signer) {
                return Err(CertError::NotInCommittee(*signer));
            }
            if !seen.insert(*signer) {
                return Err(CertError::DuplicateSigner(*signer));
            }
        }
        let items: Vec<_> = cert
            .signatures
            .iter()
            .map(|(n, s)| (&n.0, &digest, s))
            .collect();
        let results = sign::verify_many(&items);
        if let Some(((bad, _), _)) = cert.signatures.iter().zip(&results).find(|(_, ok)| !**ok) {
            return Err(CertError::BadSignature(*bad));
        }
        if cert.signatures.len() < self.quorum as usize {
            return Err(CertError::BelowQuorum {
                got: cert.signatures.len(),
                quorum: self.quorum,
            });
        }
        Ok(())
    }

    /// Checks the certificate and that `proof` shows `id` active in its window; returns the
    /// class it was active as (committed to in the certified leaf).
    pub fn verify_membership(
        &self,
        cert: &WindowCertificate,
        id: &IdentityId,
        proof: &MembershipProof,
    ) -> Result<Class, CertError> {
        self.verify_certificate(cert)?;
        Self::included(cert, id, proof)
    }

    /// The membership checks after the certificate's: the tree size, the path to the root.
    fn included(
        cert: &WindowCertificate,
        id: &IdentityId,
        proof: &MembershipProof,
    ) -> Result<Class, CertError> {
        if proof.path.leaf_count != cert.summary.count {
            return Err(CertError::CountMismatch {
                proof: proof.path.leaf_count,
                certified: cert.summary.count,
            });
        }
        let leaf = member_leaf(id, proof.class);
        if proof.id != *id || !proof.path.verify(&cert.summary.root, &leaf) {
            return Err(CertError::NotIncluded(*id));
        }
        Ok(proof.class)
    }

    /// Checks that `id` was active in the certificate's window *as* `class`: what a chain or
    /// DAO gating people (`Class::Human`) must ask, so an agent-class identity kept alive by
    /// agent challenges never passes as a person.
    pub fn verify_member_of_class(
        &self,
        cert: &WindowCertificate,
        id: &IdentityId,
        class: Class,
        proof: &MembershipProof,
    ) -> Result<(), CertError> {
        let certified = self.verify_membership(cert, id, proof)?;
        Self::of_class(id, certified, class)
    }

    fn of_class(id: &IdentityId, certified: Class, expected: Class) -> Result<(), CertError> {
        if certified == expected {
            Ok(())
        } else {
            Err(CertError::WrongClass {
                id: *id,
                certified,
                expected,
            })
        }
    }

    /// Checks that `account` (a CAIP-10 id, any valid spelling) belonged to `id` in the
    /// certificate's window and that `id` was active in it *as* `class`: what a DAO counting
    /// voters by wallet asks. In order: the account parses (`malformed_account`,
    /// `unsupported_namespace`, `bad_checksum`), the certificate verifies (its codes), `link`
    /// places `(account, id)` under the certified `links_root` (`link_not_in_window`), and
    /// `membership` places `id` under `root` (`count_mismatch`, `not_included`) as `class`
    /// (`wrong_class`).
    pub fn verify_linked(
        &self,
        cert: &WindowCertificate,
        account: &str,
        id: &IdentityId,
        link: &LinkProof,
        membership: &MembershipProof,
        class: Class,
    ) -> Result<(), CertError> {
        let account = AccountId::parse(account).map_err(CertError::Account)?;
        self.verify_certificate(cert)?;
        if link.account != account || link.identity != *id || !link.verify(&cert.summary.links_root)
        {
            return Err(CertError::LinkNotInWindow { account, id: *id });
        }
        let certified = Self::included(cert, id, membership)?;
        Self::of_class(id, certified, class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sig, WindowSummary};
    use alloc::string::ToString;
    use alloc::vec;
    use alloc::vec::Vec;
    use ed25519_dalek::SigningKey;

    fn keys(n: u8) -> Vec<SigningKey> {
        (1..=n).map(|i| SigningKey::from_bytes(&[i; 32])).collect()
    }

    fn node(k: &SigningKey) -> NodeId {
        NodeId(k.verifying_key().to_bytes())
    }

    fn certificate(keys: &[SigningKey], summary: &WindowSummary) -> WindowCertificate {
        let digest = summary.signing_digest();
        WindowCertificate {
            summary: summary.clone(),
            signatures: keys
                .iter()
                .map(|k| (node(k), sign::sign(k, &digest)))
                .collect(),
        }
    }

    #[test]
    fn the_quorum_must_be_a_strict_majority_of_distinct_keys() {
        let committee: Vec<NodeId> = keys(4).iter().map(node).collect();
        for quorum in 0..=5 {
            let made = LightVerifier::new(committee.clone(), quorum);
            assert_eq!(made.is_ok(), quorum == 3 || quorum == 4, "quorum {quorum}");
        }
        let mut twice = committee.clone();
        twice[3] = twice[0];
        let err = LightVerifier::new(twice, 3).unwrap_err();
        assert_eq!(err.code(), "bad_quorum");
        assert_eq!(
            err.to_string(),
            "quorum 3 is not a strict majority of a committee of 3 distinct members"
        );
        assert_eq!(
            LightVerifier::new(Vec::new(), 0).unwrap_err().code(),
            "bad_quorum"
        );
    }

    #[test]
    fn every_refusal_has_its_code() {
        let keys = keys(4);
        let committee: Vec<NodeId> = keys.iter().map(node).collect();
        let verifier = LightVerifier::new(committee, 3).unwrap();
        let (person, agent) = (IdentityId([7; 32]), IdentityId([8; 32]));
        let active = vec![(person, Class::Human), (agent, Class::Agent)];
        let (summary, set) = WindowSummary::of(9, active, Digest([5; 32]));
        let good = certificate(&keys[..3], &summary);
        let proof = set.proof(&person).unwrap();
        assert_eq!(
            verifier.verify_membership(&good, &person, &proof),
            Ok(Class::Human)
        );
        let code = |r: Result<(), CertError>| r.unwrap_err().code();

        let outsider = SigningKey::from_bytes(&[99; 32]);
        let mut cert = good.clone();
        cert.signatures
            .push(certificate(&[outsider], &summary).signatures[0]);
        assert_eq!(code(verifier.verify_certificate(&cert)), "not_in_committee");
        let mut cert = good.clone();
        cert.signatures.push(cert.signatures[0]);
        assert_eq!(code(verifier.verify_certificate(&cert)), "duplicate_signer");
        let mut cert = good.clone();
        cert.signatures[1].1 = Sig([1; 64]);
        assert_eq!(code(verifier.verify_certificate(&cert)), "bad_signature");
        let cert = certificate(&keys[..2], &summary);
        assert_eq!(code(verifier.verify_certificate(&cert)), "below_quorum");
        let pinned = verifier.clone().with_params(Digest([6; 32]));
        assert_eq!(code(pinned.verify_certificate(&good)), "params_mismatch");
        let other = set.proof(&agent).unwrap();
        assert_eq!(
            verifier
                .verify_membership(&good, &person, &other)
                .unwrap_err()
                .code(),
            "not_included"
        );
        let mut wrong_size = proof.clone();
        wrong_size.path.leaf_count = 3;
        assert_eq!(
            verifier
                .verify_membership(&good, &person, &wrong_size)
                .unwrap_err()
                .code(),
            "count_mismatch"
        );
        assert_eq!(
            code(verifier.verify_member_of_class(&good, &agent, Class::Human, &other)),
            "wrong_class"
        );
        assert_eq!(
            verifier.verify_member_of_class(&good, &agent, Class::Agent, &other),
            Ok(())
        );
    }

    #[test]
    fn a_linked_account_verifies_and_every_refusal_has_its_code() {
        let keys = keys(4);
        let committee: Vec<NodeId> = keys.iter().map(node).collect();
        let verifier = LightVerifier::new(committee, 3).unwrap();
        let (person, agent, idle) = (
            IdentityId([7; 32]),
            IdentityId([8; 32]),
            IdentityId([9; 32]),
        );
        let active = vec![(person, Class::Human), (agent, Class::Agent)];
        let wallet = "eip155:1:0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
        let account = |s: &str| AccountId::parse(s).unwrap();
        let bot = "eip155:1:0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
        let lazy = "eip155:1:0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc";
        let links = vec![
            (account(wallet), person),
            (account(bot), agent),
            (account(lazy), idle),
        ];
        let (summary, set, linked) =
            WindowSummary::with_links(9, active.clone(), links, Digest([5; 32]));
        let cert = certificate(&keys[..3], &summary);
        let member = |id: &IdentityId| set.proof(id).unwrap();
        let link = |a: &str| linked.proof(&account(a)).unwrap();
        let check = |a: &str, id: &IdentityId, l: &LinkProof, m: &MembershipProof, c: Class| {
            verifier
                .verify_linked(&cert, a, id, l, m, c)
                .map_err(|e| e.code())
        };
        assert_eq!(
            check(
                wallet,
                &person,
                &link(wallet),
                &member(&person),
                Class::Human
            ),
            Ok(())
        );
        // Any spelling of the account: lower case is canonical.
        let lower = wallet.to_lowercase();
        assert_eq!(
            check(
                &lower,
                &person,
                &link(wallet),
                &member(&person),
                Class::Human
            ),
            Ok(())
        );
        assert_eq!(
            check(bot, &agent, &link(bot), &member(&agent), Class::Agent),
            Ok(())
        );
        // The agent's wallet asked about as a person's.
        assert_eq!(
            check(bot, &agent, &link(bot), &member(&agent), Class::Human),
            Err("wrong_class")
        );
        // Linked, but the identity was not active: no membership proof of its own.
        assert_eq!(
            check(lazy, &idle, &link(lazy), &member(&person), Class::Human),
            Err("not_included")
        );
        // Another account's link proof, another identity, an account not linked at all.
        assert_eq!(
            check(wallet, &person, &link(bot), &member(&person), Class::Human),
            Err("link_not_in_window")
        );
        assert_eq!(
            check(bot, &person, &link(bot), &member(&person), Class::Human),
            Err("link_not_in_window")
        );
        let mut forged = link(bot);
        forged.identity = person;
        assert_eq!(
            check(bot, &person, &forged, &member(&person), Class::Human),
            Err("link_not_in_window")
        );
        let mut flipped = link(wallet);
        flipped.path.siblings[0].0[0] ^= 1;
        assert_eq!(
            check(wallet, &person, &flipped, &member(&person), Class::Human),
            Err("link_not_in_window")
        );
        // A proof of window 9 against window 10's certificate, whose links differ.
        let (next, set10, _) =
            WindowSummary::with_links(10, active, vec![(account(bot), agent)], Digest([5; 32]));
        let cert10 = certificate(&keys[..3], &next);
        let member10 = set10.proof(&person).unwrap();
        assert_eq!(
            verifier
                .verify_linked(
                    &cert10,
                    wallet,
                    &person,
                    &link(wallet),
                    &member10,
                    Class::Human
                )
                .unwrap_err()
                .code(),
            "link_not_in_window"
        );
        // The account refused before anything else.
        let bad_checksum = "eip155:1:0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266";
        let other_namespace = "cosmos:cosmoshub-4:cosmos1t2uflqwqe0fsj0shcfkrvpukewcw40yjj6hdc0";
        for (a, code) in [
            (bad_checksum, "bad_checksum"),
            (other_namespace, "unsupported_namespace"),
            ("eip155:1:0x12", "malformed_account"),
        ] {
            assert_eq!(
                check(a, &person, &link(wallet), &member(&person), Class::Human),
                Err(code)
            );
        }
        // A certificate that does not verify is refused as such.
        let below = certificate(&keys[..2], &summary);
        assert_eq!(
            verifier
                .verify_linked(
                    &below,
                    wallet,
                    &person,
                    &link(wallet),
                    &member(&person),
                    Class::Human
                )
                .unwrap_err()
                .code(),
            "below_quorum"
        );
        let mut tampered = cert.clone();
        tampered.summary.links_root = Digest([1; 32]);
        assert_eq!(
            verifier
                .verify_linked(
                    &tampered,
                    wallet,
                    &person,
                    &link(wallet),
                    &member(&person),
                    Class::Human
                )
                .unwrap_err()
                .code(),
            "bad_signature"
        );
    }
}
