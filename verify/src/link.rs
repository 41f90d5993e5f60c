//! Account links: an identity binds an external account (a wallet), so that a DAO counting
//! voters by address can ask whether an address belongs to an identity active as a person.
//!
//! A link is an [`AccountLink`] statement signed twice ([`SignedLink`]): by the identity's
//! ed25519 key (so nobody links an account to someone else's identity) and by the account's own
//! key with EIP-191 `personal_sign` over the same text (so nobody claims someone else's wallet).
//! The committee records the links it was shown and, per window, commits to them in
//! [`WindowSummary::links_root`](crate::WindowSummary::links_root): the Merkle root of the
//! [`LinkSet`], one `(account, identity)` leaf per account ([`link_leaf`]). A [`LinkProof`] places
//! one pair under that root; [`LightVerifier::verify_linked`](crate::LightVerifier::verify_linked)
//! checks it together with the certificate and the identity's membership proof.
//!
//! The statement's text, what the wallet shows and both keys sign, is ([`AccountLink::text`]):
//!
//! ```text
//! HCO account link v1
//! network: <params digest, 64 lower-case hex>
//! identity: <identity key, 64 lower-case hex>
//! account: <canonical CAIP-10 account id>
//! from window: <decimal>
//! ```
//!
//! (lines joined with `\n`, no trailing newline). `network` is the parameter digest of the
//! network the link is for, so a link made for one network is no link on another.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use ed25519_dalek::SigningKey;

#[cfg(feature = "eip191")]
use crate::account::recover_personal_sign;
use crate::account::{AccountError, AccountId};
use crate::merkle::{MerkleProof, MerkleTree, leaf_hash};
use crate::{AccountSig, Digest, IdentityId, Sig, sign};

/// The domain of the identity's signature: it signs `sign::digest(LINK_DOMAIN, [text])`.
pub const LINK_DOMAIN: &str = "hco account link v1";

/// The tag that starts every link leaf's bytes (see [`link_leaf`]).
pub const LINK_LEAF_TAG: &[u8] = b"hco link leaf v1";

/// Why a signed link does not verify. Codes are stable.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkError {
    /// The account id is refused (`malformed_account`, `unsupported_namespace`, `bad_checksum`).
    Account(AccountError),
    /// The identity's ed25519 signature over the statement does not verify (strict).
    BadIdentitySignature,
    /// The account signature is not a valid low-s `personal_sign` signature by the account's
    /// address over the statement's text.
    BadAccountSignature,
    /// The statement names another network's parameter digest.
    WrongNetwork,
}

impl LinkError {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            LinkError::Account(e) => e.code(),
            LinkError::BadIdentitySignature => "bad_identity_signature",
            LinkError::BadAccountSignature => "bad_account_signature",
            LinkError::WrongNetwork => "wrong_network",
        }
    }
}

impl From<AccountError> for LinkError {
    fn from(e: AccountError) -> Self {
        LinkError::Account(e)
    }
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinkError::Account(e) => e.fmt(f),
            LinkError::BadIdentitySignature => {
                f.write_str("the identity's signature over the link does not verify")
            }
            LinkError::BadAccountSignature => f.write_str(
                "the account's signature over the link does not recover to the account's address",
            ),
            LinkError::WrongNetwork => f.write_str("the link was made for another network"),
        }
    }
}

impl core::error::Error for LinkError {}

/// The statement: identity `identity` links `account`, on network `network`, from window
/// `from_window` on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct AccountLink {
    /// The parameter digest of the network (`digest` of `GET /v1/params`).
    pub network: Digest,
    /// The identity.
    pub identity: IdentityId,
    /// The account, canonical.
    pub account: AccountId,
    /// The first window the link is meant for.
    pub from_window: u64,
}

impl AccountLink {
    /// The statement of `identity` linking `account` (parsed: `malformed_account`,
    /// `unsupported_namespace`, `bad_checksum`).
    pub fn new(
        network: Digest,
        identity: IdentityId,
        account: &str,
        from_window: u64,
    ) -> Result<Self, LinkError> {
        Ok(Self {
            network,
            identity,
            account: AccountId::parse(account)?,
            from_window,
        })
    }

    /// The text both keys sign (see the module documentation).
    pub fn text(&self) -> String {
        format!(
            "HCO account link v1\nnetwork: {}\nidentity: {}\naccount: {}\nfrom window: {}",
            self.network, self.identity, self.account, self.from_window
        )
    }

    /// The digest the identity signs: `sign::digest("hco account link v1", [text])`.
    pub fn signing_digest(&self) -> Digest {
        sign::digest(LINK_DOMAIN, &[self.text().as_bytes()])
    }

    /// The identity's signature (what a client holding the identity key makes).
    pub fn sign_identity(&self, key: &SigningKey) -> Sig {
        sign::sign(key, &self.signing_digest())
    }
}

/// A link signed by both keys.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SignedLink {
    /// The statement.
    pub link: AccountLink,
    /// ed25519 by `link.identity` over [`AccountLink::signing_digest`].
    pub identity_sig: Sig,
    /// EIP-191 `personal_sign` by the account over [`AccountLink::text`].
    pub account_sig: AccountSig,
}

impl SignedLink {
    /// Checks both signatures: the identity's (strict ed25519: `bad_identity_signature`), then
    /// the account's (`bad_account_signature`: the address recovered from a low-s signature
    /// with `v` 27/28 or 0/1 must be the account's). It does not look at `network`: see
    /// [`SignedLink::verify_on`]. Needs the `eip191` feature (default).
    #[cfg(feature = "eip191")]
    pub fn verify(&self) -> Result<(), LinkError> {
        let text = self.link.text();
        let digest = sign::digest(LINK_DOMAIN, &[text.as_bytes()]);
        if !sign::verify(&self.link.identity.0, &digest, &self.identity_sig) {
            return Err(LinkError::BadIdentitySignature);
        }
        match recover_personal_sign(text.as_bytes(), &self.account_sig.0) {
            Some(address) if address == self.link.account.address() => Ok(()),
            _ => Err(LinkError::BadAccountSignature),
        }
    }

    /// [`SignedLink::verify`], first requiring the statement to name `network`
    /// (`wrong_network`).
    #[cfg(feature = "eip191")]
    pub fn verify_on(&self, network: &Digest) -> Result<(), LinkError> {
        if self.link.network != *network {
            return Err(LinkError::WrongNetwork);
        }
        self.verify()
    }
}

/// The Merkle leaf of a link: `leaf_hash("hco link leaf v1" ‖ 0x00 ‖ account ‖ 0x00 ‖ identity)`,
/// the account as its canonical ASCII text, the identity as its 32 key bytes. (A CAIP-10 id
/// holds no `0x00`, so the bytes parse one way; they are never 33 bytes long, so never a member
/// leaf's.)
pub fn link_leaf(account: &AccountId, identity: &IdentityId) -> Digest {
    let mut bytes = Vec::with_capacity(LINK_LEAF_TAG.len() + account.as_str().len() + 34);
    bytes.extend_from_slice(LINK_LEAF_TAG);
    bytes.push(0);
    bytes.extend_from_slice(account.as_str().as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(&identity.0);
    leaf_hash(&bytes)
}

/// A window's links, sorted by canonical account (the text's bytes), with their Merkle tree for proofs.
#[derive(Debug, Clone)]
pub struct LinkSet {
    accounts: Vec<AccountId>,
    identities: Vec<IdentityId>,
    tree: MerkleTree,
}

impl LinkSet {
    /// The set of `links`, made deterministic whatever their order, so that every honest
    /// member's root agrees: sorted by `(account, identity)`; an account listed with several
    /// identities keeps the first (the smallest identity key); then an identity with several
    /// accounts of one chain (CAIP-2 id, e.g. `eip155:1`) keeps the first of them (the smallest
    /// canonical account). The committee resolves conflicts by its own rule before it builds
    /// the set; these are what remains if it did not. The empty set's root is
    /// [`merkle::empty_root`](crate::merkle::empty_root).
    pub fn new(mut links: Vec<(AccountId, IdentityId)>) -> Self {
        links.sort_unstable();
        links.dedup_by(|later, first| later.0 == first.0);
        let mut chains: BTreeSet<(IdentityId, String)> = BTreeSet::new();
        links.retain(|(account, identity)| chains.insert((*identity, account.chain_id().into())));
        let tree = MerkleTree::new(
            links
                .iter()
                .map(|(account, identity)| link_leaf(account, identity))
                .collect(),
        );
        let (accounts, identities) = links.into_iter().unzip();
        Self {
            accounts,
            identities,
            tree,
        }
    }

    /// The Merkle root (`merkle::empty_root()` for no links).
    pub fn root(&self) -> Digest {
        self.tree.root()
    }

    /// Links in the set.
    pub fn len(&self) -> usize {
        self.accounts.len()
    }

    /// Whether the set has no link.
    pub fn is_empty(&self) -> bool {
        self.accounts.is_empty()
    }

    /// The links, sorted by account.
    pub fn links(&self) -> impl Iterator<Item = (&AccountId, &IdentityId)> {
        self.accounts.iter().zip(&self.identities)
    }

    /// The identity `account` is linked to, if any.
    pub fn identity_of(&self, account: &AccountId) -> Option<IdentityId> {
        let index = self.accounts.binary_search(account).ok()?;
        self.identities.get(index).copied()
    }

    /// The proof that `account` is linked to its identity, if it is in the set.
    pub fn proof(&self, account: &AccountId) -> Option<LinkProof> {
        let index = self.accounts.binary_search(account).ok()?;
        Some(LinkProof {
            account: account.clone(),
            identity: *self.identities.get(index)?,
            path: self.tree.proof(index)?,
        })
    }
}

/// A proof that `account` is linked to `identity` in a certified window.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LinkProof {
    /// The account, canonical.
    pub account: AccountId,
    /// The identity it is linked to.
    pub identity: IdentityId,
    /// The Merkle path of [`link_leaf`]`(account, identity)`.
    pub path: MerkleProof,
}

impl LinkProof {
    /// Whether the path places `(account, identity)` under `links_root`.
    pub fn verify(&self, links_root: &Digest) -> bool {
        self.path
            .verify(links_root, &link_leaf(&self.account, &self.identity))
    }
}

#[cfg(test)]
#[cfg(feature = "eip191")]
mod tests {
    use super::*;
    use crate::account::{address_of, personal_message_hash};
    use alloc::string::ToString;
    use alloc::vec;
    use proptest::prelude::*;

    /// The Hardhat/Anvil default account #0 key: a published test key, never a real one.
    const EVM_KEY: &str = "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
    const EVM_ADDRESS: &str = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";

    fn evm_key() -> k256::ecdsa::SigningKey {
        k256::ecdsa::SigningKey::from_slice(&hex::decode(EVM_KEY).unwrap()).unwrap()
    }

    fn personal_sign(key: &k256::ecdsa::SigningKey, text: &str) -> AccountSig {
        let (sig, recovery) = key.sign_prehash_recoverable(&personal_message_hash(text.as_bytes()));
        let mut out = [0u8; 65];
        out[..64].copy_from_slice(&sig.to_bytes());
        out[64] = 27 + recovery.to_byte();
        AccountSig(out)
    }

    fn signed(account: &str) -> (SignedLink, SigningKey) {
        let identity_key = SigningKey::from_bytes(&[42; 32]);
        let identity = IdentityId(identity_key.verifying_key().to_bytes());
        let link = AccountLink::new(Digest([5; 32]), identity, account, 12).unwrap();
        let signed = SignedLink {
            identity_sig: link.sign_identity(&identity_key),
            account_sig: personal_sign(&evm_key(), &link.text()),
            link,
        };
        (signed, identity_key)
    }

    #[test]
    fn the_statement_text_is_exactly_five_lines() {
        let (s, _) = signed(&format!("eip155:1:{EVM_ADDRESS}"));
        let text = s.link.text();
        assert_eq!(
            text,
            format!(
                "HCO account link v1\nnetwork: {}\nidentity: {}\naccount: eip155:1:{}\nfrom window: 12",
                "05".repeat(32),
                s.link.identity.to_hex(),
                EVM_ADDRESS.to_lowercase()
            )
        );
        assert!(!text.ends_with('\n'));
        assert_eq!(
            address_of(evm_key().verifying_key()),
            AccountId::parse(&format!("eip155:1:{EVM_ADDRESS}"))
                .unwrap()
                .address()
        );
    }

    #[test]
    fn a_link_signed_by_both_keys_verifies_and_every_tamper_has_its_code() {
        let (good, identity_key) = signed(&format!("eip155:1:{EVM_ADDRESS}"));
        assert_eq!(good.verify(), Ok(()));
        assert_eq!(good.verify_on(&Digest([5; 32])), Ok(()));
        assert_eq!(
            good.verify_on(&Digest([6; 32])).unwrap_err().code(),
            "wrong_network"
        );
        let code = |s: &SignedLink| s.verify().unwrap_err().code();

        // Another account (same key signed, for the Hardhat address): the address differs.
        let mut other = good.clone();
        other.link.account =
            AccountId::parse("eip155:1:0x70997970c51812dc3a010c7d01b50e0d17dc79c8").unwrap();
        other.identity_sig = other.link.sign_identity(&identity_key);
        assert_eq!(code(&other), "bad_account_signature");
        // Another chain: the text differs, so the wallet's signature does not cover it.
        let mut chain = good.clone();
        chain.link.account = AccountId::parse(&format!("eip155:137:{EVM_ADDRESS}")).unwrap();
        chain.identity_sig = chain.link.sign_identity(&identity_key);
        assert_eq!(code(&chain), "bad_account_signature");
        // Any field changed after signing: the identity's signature goes first.
        let mut window = good.clone();
        window.link.from_window += 1;
        assert_eq!(code(&window), "bad_identity_signature");
        let mut network = good.clone();
        network.link.network = Digest([6; 32]);
        assert_eq!(code(&network), "bad_identity_signature");
        let mut sig = good.clone();
        sig.identity_sig.0[3] ^= 1;
        assert_eq!(code(&sig), "bad_identity_signature");
        // Someone else's identity key.
        let mut stranger = good.clone();
        stranger.identity_sig = good.link.sign_identity(&SigningKey::from_bytes(&[43; 32]));
        assert_eq!(code(&stranger), "bad_identity_signature");
        // The wallet signature broken: flipped bit, bad v, the other parity.
        for (at, flip) in [(0, 1), (40, 0x80), (64, 0xff), (64, 0x03)] {
            let mut s = good.clone();
            s.account_sig.0[at] ^= flip;
            assert_eq!(code(&s), "bad_account_signature", "{at}");
        }
        // v as 0/1 is the same signature.
        let mut zero_one = good.clone();
        zero_one.account_sig.0[64] -= 27;
        assert_eq!(zero_one.verify(), Ok(()));
        // The account parsed on the way in.
        let parse = |a: &str| {
            AccountLink::new(Digest::ZERO, good.link.identity, a, 0)
                .unwrap_err()
                .code()
        };
        assert_eq!(
            parse("eip155:1:0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266"),
            "bad_checksum"
        );
        assert_eq!(
            parse("cosmos:cosmoshub-4:cosmos1t2uflqwqe0fsj0shcfkrvpukewcw40yjj6hdc0"),
            "unsupported_namespace"
        );
        assert_eq!(parse("eip155:1:0xf39f"), "malformed_account");
    }

    #[cfg(feature = "serde")]
    #[test]
    fn the_json_shape_takes_wallet_spellings_and_writes_canonical_ones() {
        let (good, _) = signed(&format!("eip155:1:{EVM_ADDRESS}"));
        let json = serde_json::to_value(&good).unwrap();
        assert_eq!(
            json["link"]["account"],
            format!("eip155:1:{}", EVM_ADDRESS.to_lowercase())
        );
        assert_eq!(json["account_sig"].as_str().unwrap().len(), 130);
        let mut wallet = json.clone();
        wallet["link"]["account"] = format!("eip155:1:{EVM_ADDRESS}").into();
        wallet["account_sig"] = format!("0x{}", json["account_sig"].as_str().unwrap()).into();
        let back: SignedLink = serde_json::from_value(wallet).unwrap();
        assert_eq!(back, good);
        let mut bad = json.clone();
        bad["link"]["account"] = "eip155:1:0xf39fd6e51aad88F6F4ce6aB8827279cffFb92266".into();
        let err = serde_json::from_value::<SignedLink>(bad).unwrap_err();
        assert!(err.to_string().contains("bad_checksum"), "{err}");
    }

    fn account(n: u32, chain: u32) -> AccountId {
        AccountId::parse(&format!("eip155:{chain}:0x{n:040x}")).unwrap()
    }

    #[test]
    fn the_set_keeps_one_identity_per_account_and_one_account_per_identity_per_chain() {
        let id = |b: u8| IdentityId([b; 32]);
        let links = vec![
            (account(2, 1), id(9)),
            (account(2, 1), id(3)), // account 2 twice: identity 3 (smaller) kept
            (account(1, 1), id(5)),
            (account(4, 1), id(5)), // identity 5's second account on chain 1: dropped
            (account(4, 10), id(5)), // on another chain: kept
            (account(1, 1), id(5)), // exact duplicate
        ];
        let set = LinkSet::new(links.clone());
        let kept: Vec<_> = set.links().map(|(a, i)| (a.clone(), *i)).collect();
        // Sorted by the canonical text's bytes: `eip155:10:` before `eip155:1:0x` (`0` < `:`).
        assert_eq!(
            kept,
            vec![
                (account(4, 10), id(5)),
                (account(1, 1), id(5)),
                (account(2, 1), id(3)),
            ]
        );
        let mut reversed = links;
        reversed.reverse();
        assert_eq!(LinkSet::new(reversed).root(), set.root());
        assert_eq!(set.identity_of(&account(2, 1)), Some(id(3)));
        assert!(set.proof(&account(4, 1)).is_none());
        assert_eq!(LinkSet::new(Vec::new()).root(), crate::merkle::empty_root());
        assert!(LinkSet::new(Vec::new()).is_empty());
        // The leaf binds both halves.
        assert_ne!(
            link_leaf(&account(1, 1), &id(5)),
            link_leaf(&account(1, 1), &id(6))
        );
        assert_ne!(
            link_leaf(&account(1, 1), &id(5)),
            link_leaf(&account(1, 2), &id(5))
        );
    }

    proptest! {
        #[test]
        fn every_link_proves_and_nothing_else_does(
            pairs in prop::collection::vec((0u32..40, 1u32..4, 0u8..12), 0..60),
            probe in (0u32..40, 1u32..4, 0u8..12),
        ) {
            let links: Vec<_> = pairs.iter().map(|(a, c, i)| (account(*a, *c), IdentityId([*i; 32]))).collect();
            let set = LinkSet::new(links.clone());
            let root = set.root();
            for (a, i) in set.links() {
                let proof = set.proof(a).unwrap();
                prop_assert_eq!(&proof.account, a);
                prop_assert_eq!(proof.identity, *i);
                prop_assert!(proof.verify(&root));
                // The same path for another identity or another account fails.
                let mut other = proof.clone();
                other.identity.0[0] ^= 0x80;
                prop_assert!(!other.verify(&root));
                let mut moved = proof.clone();
                moved.account = account(99, 1);
                prop_assert!(!moved.verify(&root));
            }
            // Every account proves the one identity kept, and only accounts in the set prove.
            let (a, c, i) = probe;
            let probe = account(a, c);
            match set.proof(&probe) {
                Some(p) => prop_assert!(links.iter().any(|(acc, id)| *acc == probe && *id == p.identity)),
                None => prop_assert!(set.links().all(|(acc, _)| *acc != probe)),
            }
            if set.links().all(|(acc, id)| !(*acc == probe && *id == IdentityId([i; 32]))) {
                // A pair not in the set has no path: none of the members' paths carries it.
                for (acc, _) in set.links() {
                    let mut forged = set.proof(acc).unwrap();
                    forged.account = probe.clone();
                    forged.identity = IdentityId([i; 32]);
                    prop_assert!(!forged.verify(&root));
                }
            }
            // Unique accounts; one account per identity per chain.
            let accounts: BTreeSet<_> = set.links().map(|(a, _)| a.clone()).collect();
            prop_assert_eq!(accounts.len(), set.len());
            let per_chain: BTreeSet<_> = set.links().map(|(a, i)| (*i, a.chain_id().to_string())).collect();
            prop_assert_eq!(per_chain.len(), set.len());
        }
    }
}
