//! The fixtures of the JavaScript verifier (`js/test/fixtures/`), made here by the Rust code:
//! real window certificates and membership proofs of a four-member committee, in the gateway's
//! JSON shapes, and tampered variants judged by the Rust light verifier. The test fails when
//! the committed files differ from what the code makes, so the two verifiers cannot drift apart;
//! `HCO_WRITE_JS_FIXTURES=1 cargo test -p hco-oracle --test it js_fixtures` rewrites them.
//! `links.json` holds account links: a statement signed by an identity key and, with EIP-191
//! `personal_sign`, by a fixed secp256k1 test key (k256 here, RFC 6979, so the bytes are
//! stable), certificates committing to links, and tampered variants, each judged by the Rust
//! code.

use std::path::PathBuf;

use hco_oracle::certificate::{assemble, member_leaf};
use hco_oracle::{
    Class, Digest, IdentityId, LightVerifier, NodeId, SignedSummary, WindowCertificate,
    WindowSummary, sign, testing,
};
use serde_json::{Value, json};

const COMMITTEE: u64 = 4;
const QUORUM: u32 = 3;

/// The parameter digest the certificates name: a fixed value, so that a change to the default
/// parameters does not change these fixtures (the verifier only compares the digest).
fn params_digest() -> Digest {
    sign::digest("hco js fixture params v1", &[])
}

fn committee() -> Vec<NodeId> {
    (1..=COMMITTEE)
        .map(|n| testing::node_id(&testing::key(n)))
        .collect()
}

/// The identities: keys 101..=105, both classes.
fn members() -> Vec<(IdentityId, Class)> {
    [
        (101, Class::Human),
        (102, Class::Agent),
        (103, Class::Human),
        (104, Class::Human),
        (105, Class::Agent),
    ]
    .into_iter()
    .map(|(n, c)| (testing::identity_id(&testing::key(n)), c))
    .collect()
}

struct Window {
    certificate: WindowCertificate,
    proofs: Vec<(IdentityId, Value)>,
}

/// Window `t` with `active` members, signed by committee members `signers` (1-based keys).
fn window(t: u64, active: Vec<(IdentityId, Class)>, signers: &[u64]) -> Window {
    let (summary, set) = WindowSummary::of(t, active, params_digest());
    let signed: Vec<SignedSummary> = signers
        .iter()
        .map(|n| SignedSummary::new(&testing::key(*n), summary.clone()))
        .collect();
    let certificate = assemble(&signed, QUORUM).expect("a quorum signed");
    let proofs = set
        .ids()
        .iter()
        .map(|id| {
            let proof = set.proof(id).expect("a member");
            (*id, json!({ "certificate": certificate, "proof": proof }))
        })
        .collect();
    Window {
        certificate,
        proofs,
    }
}

fn summary_digest(s: &WindowSummary) -> Digest {
    sign::digest(
        "hco window summary v2",
        &[
            &[s.version],
            &s.t.to_be_bytes(),
            &s.root.0,
            &s.count.to_be_bytes(),
            &s.links_root.0,
            &s.params.0,
        ],
    )
}

/// The certificates and proofs, with the intermediate bytes (summary digest, leaves) a port
/// checks first.
fn certificates() -> (Value, Vec<Window>) {
    let all = members();
    let windows = vec![
        // All five identities, signed by exactly a quorum.
        window(7, all.clone(), &[1, 2, 3]),
        // Three of them, signed by the whole committee.
        window(8, vec![all[0], all[1], all[3]], &[1, 2, 3, 4]),
    ];
    let doc = json!({
        "about": "Made by oracle/tests/it/js_fixtures.rs from the Rust code; do not edit by hand.",
        "params": {
            "digest": params_digest(),
            "params": { "committee": committee(), "quorum": QUORUM },
        },
        "windows": windows.iter().map(|w| {
            let digest = summary_digest(&w.certificate.summary);
            for (node, sig) in &w.certificate.signatures {
                assert!(sign::verify(&node.0, &digest, sig), "the summary bytes above are the signed ones");
            }
            json!({
                "t": w.certificate.summary.t,
                "summary_digest": digest,
                "certificate": w.certificate,
                "proofs": w.proofs.iter().map(|(id, body)| {
                    let class = all.iter().find(|(m, _)| m == id).map(|(_, c)| *c).expect("a member");
                    json!({ "id": id, "class": class, "leaf": member_leaf(id, class), "body": body })
                }).collect::<Vec<_>>(),
            })
        }).collect::<Vec<_>>(),
    });
    (doc, windows)
}

/// One verification as the Rust light verifier judges it: `expect` is `"ok"` or the error code.
fn case(name: &str, committee: &[NodeId], quorum: u32, check: Check) -> Value {
    let verifier = LightVerifier::new(committee.to_vec(), quorum);
    let mut out = json!({ "name": name, "committee": committee, "quorum": quorum });
    let Check {
        params,
        id,
        class,
        body,
    } = check;
    let result = verifier.and_then(|v| {
        let v = match params {
            Some(p) => v.with_params(p),
            None => v,
        };
        let certificate: WindowCertificate =
            serde_json::from_value(body["certificate"].clone()).expect("a certificate");
        let proof = serde_json::from_value(body["proof"].clone()).expect("a proof");
        match class {
            Some(c) => v
                .verify_member_of_class(&certificate, &id, c, &proof)
                .map(|()| c),
            None => v.verify_membership(&certificate, &id, &proof),
        }
    });
    out["params"] = json!(params);
    out["id"] = json!(id);
    out["class"] = json!(class);
    out["body"] = body;
    out["expect"] = match result {
        Ok(class) => json!({ "ok": class }),
        Err(e) => json!({ "code": e.code() }),
    };
    out
}

struct Check {
    params: Option<Digest>,
    id: IdentityId,
    class: Option<Class>,
    body: Value,
}

/// Tampered and honest variants of the fixtures, each judged by the Rust verifier.
fn cases(windows: &[Window]) -> Value {
    let committee = committee();
    let w7 = &windows[0];
    let w8 = &windows[1];
    let class_of = |id: &IdentityId| {
        members()
            .into_iter()
            .find(|(m, _)| m == id)
            .map(|(_, c)| c)
            .expect("a member")
    };
    let (agent, agent_body) = w7
        .proofs
        .iter()
        .find(|(id, _)| class_of(id) == Class::Agent)
        .cloned()
        .expect("an agent");
    let (human, human_body) = w7
        .proofs
        .iter()
        .find(|(id, _)| class_of(id) == Class::Human)
        .cloned()
        .expect("a human");
    let check = |id: IdentityId, class: Option<Class>, body: Value| Check {
        params: Some(params_digest()),
        id,
        class,
        body,
    };
    let edit = |body: &Value, f: &dyn Fn(&mut Value)| {
        let mut b = body.clone();
        f(&mut b);
        b
    };
    let flip_hex = |v: &mut Value, nibble: usize| {
        let s = v.as_str().expect("hex").to_owned();
        let mut chars: Vec<char> = s.chars().collect();
        let d = chars[nibble].to_digit(16).expect("hex digit") ^ 1;
        chars[nibble] = std::char::from_digit(d, 16).expect("hex digit");
        *v = json!(chars.into_iter().collect::<String>());
    };
    let mut stranger_sig = w7.certificate.clone();
    let outsider = testing::key(9);
    stranger_sig.signatures[2] = (
        testing::node_id(&outsider),
        SignedSummary::new(&outsider, w7.certificate.summary.clone()).sig,
    );
    let mut duplicate = w7.certificate.clone();
    duplicate.signatures[2] = duplicate.signatures[0];
    let mut dup_committee = committee.clone();
    dup_committee[3] = dup_committee[0];
    let other_params = sign::digest("hco js fixture other params v1", &[]);
    let out = vec![
        case(
            "a human's proof, asked as human",
            &committee,
            QUORUM,
            check(human, Some(Class::Human), human_body.clone()),
        ),
        case(
            "an agent's proof, asked without a class",
            &committee,
            QUORUM,
            check(agent, None, agent_body.clone()),
        ),
        case(
            "an agent's proof, asked as agent",
            &committee,
            QUORUM,
            check(agent, Some(Class::Agent), agent_body.clone()),
        ),
        case(
            "an agent's proof, asked as human",
            &committee,
            QUORUM,
            check(agent, Some(Class::Human), agent_body.clone()),
        ),
        case(
            "a human's proof, asked as agent",
            &committee,
            QUORUM,
            check(human, Some(Class::Agent), human_body.clone()),
        ),
        case(
            "a proof signed by the whole committee",
            &committee,
            QUORUM,
            check(
                w8.proofs[0].0,
                Some(class_of(&w8.proofs[0].0)),
                w8.proofs[0].1.clone(),
            ),
        ),
        case(
            "without pinning the parameter digest",
            &committee,
            QUORUM,
            Check {
                params: None,
                ..check(human, Some(Class::Human), human_body.clone())
            },
        ),
        case(
            "a tampered signature",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    flip_hex(&mut b["certificate"]["signatures"][1][1], 5)
                }),
            ),
        ),
        case(
            "a tampered summary count",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    let c = b["certificate"]["summary"]["count"]
                        .as_u64()
                        .expect("count");
                    b["certificate"]["summary"]["count"] = json!(c + 1);
                    b["proof"]["path"]["leaf_count"] = json!(c + 1);
                }),
            ),
        ),
        case(
            "a tampered summary window",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    b["certificate"]["summary"]["t"] = json!(8)
                }),
            ),
        ),
        case(
            "below quorum (one of three signatures dropped)",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    b["certificate"]["signatures"]
                        .as_array_mut()
                        .expect("signatures")
                        .pop();
                }),
            ),
        ),
        case(
            "no signature at all",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| b["certificate"]["signatures"] = json!([])),
            ),
        ),
        case(
            "a signer outside the committee",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| b["certificate"] = json!(stranger_sig)),
            ),
        ),
        case(
            "the same signer twice",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| b["certificate"] = json!(duplicate)),
            ),
        ),
        case(
            "other network parameters",
            &committee,
            QUORUM,
            Check {
                params: Some(other_params),
                ..check(human, Some(Class::Human), human_body.clone())
            },
        ),
        case(
            "a flipped bit in the Merkle path",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    flip_hex(&mut b["proof"]["path"]["siblings"][0], 0)
                }),
            ),
        ),
        case(
            "a flipped bit in the last sibling",
            &committee,
            QUORUM,
            check(
                agent,
                Some(Class::Agent),
                edit(&agent_body, &|b| {
                    let last = b["proof"]["path"]["siblings"]
                        .as_array()
                        .expect("siblings")
                        .len()
                        - 1;
                    flip_hex(&mut b["proof"]["path"]["siblings"][last], 63)
                }),
            ),
        ),
        case(
            "the leaf index moved",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    let i = b["proof"]["path"]["index"].as_u64().expect("index");
                    b["proof"]["path"]["index"] = json!(i ^ 1);
                }),
            ),
        ),
        case(
            "a sibling dropped",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    b["proof"]["path"]["siblings"]
                        .as_array_mut()
                        .expect("siblings")
                        .pop();
                }),
            ),
        ),
        case(
            "the proof's leaf count differs from the certificate's",
            &committee,
            QUORUM,
            check(
                human,
                Some(Class::Human),
                edit(&human_body, &|b| {
                    b["proof"]["path"]["leaf_count"] = json!(6)
                }),
            ),
        ),
        case(
            "the class in the proof flipped (the leaf no longer matches)",
            &committee,
            QUORUM,
            check(
                agent,
                None,
                edit(&agent_body, &|b| b["proof"]["class"] = json!("human")),
            ),
        ),
        case(
            "another identity's proof",
            &committee,
            QUORUM,
            check(agent, None, human_body.clone()),
        ),
        case(
            "an identity not in the set, with a member's proof",
            &committee,
            QUORUM,
            check(
                testing::identity_id(&testing::key(106)),
                None,
                human_body.clone(),
            ),
        ),
        case(
            "quorum of half the committee",
            &committee,
            2,
            check(human, None, human_body.clone()),
        ),
        case(
            "quorum 0",
            &committee,
            0,
            check(human, None, human_body.clone()),
        ),
        case(
            "quorum above the committee",
            &committee,
            5,
            check(human, None, human_body.clone()),
        ),
        case(
            "a committee listing a key twice",
            &dup_committee,
            QUORUM,
            check(human, None, human_body.clone()),
        ),
        case(
            "a committee listing a key twice, quorum a majority of distinct keys",
            &dup_committee,
            2,
            check(human, None, human_body),
        ),
    ];
    json!({
        "about": "Made by oracle/tests/it/js_fixtures.rs: each body judged by the Rust LightVerifier (expect is its class or its error code); do not edit by hand.",
        "cases": out,
    })
}

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../js/test/fixtures")
}

#[test]
fn js_fixtures_are_what_the_rust_code_makes() {
    let (certificates, windows) = certificates();
    let files = [
        ("certificates.json", certificates),
        ("cases.json", cases(&windows)),
        ("links.json", links::fixture()),
    ];
    let write = std::env::var_os("HCO_WRITE_JS_FIXTURES").is_some();
    let dir = fixtures_dir();
    for (name, doc) in files {
        let text = serde_json::to_string_pretty(&doc).unwrap() + "\n";
        let path = dir.join(name);
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == text,
            "js/test/fixtures/{name} differs from what the Rust code makes: rewrite it with \
             HCO_WRITE_JS_FIXTURES=1 cargo test -p hco-oracle --test it js_fixtures, and check \
             that the JavaScript verifier still agrees (npm test in js/)"
        );
    }
}

/// The account-link fixtures (`links.json`).
mod links {
    use hco_oracle::{Class, IdentityId, LightVerifier, WindowCertificate, testing};
    use hco_verify::account::{address_of, checksummed, personal_message_hash};
    use hco_verify::{
        AccountId, AccountLink, AccountSig, LinkError, LinkProof, LinkSet, MembershipProof,
        SignedLink, WindowSummary, link_leaf,
    };
    use k256::ecdsa::SigningKey as EvmKey;
    use serde_json::{Value, json};

    use super::{QUORUM, committee, params_digest, summary_digest};
    use hco_oracle::SignedSummary;
    use hco_oracle::certificate::assemble;

    /// Published test keys (Hardhat/Anvil default accounts #0 and #1), never real ones.
    const EVM_KEYS: [&str; 2] = [
        "ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
        "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
    ];

    fn evm_key(n: usize) -> EvmKey {
        EvmKey::from_slice(&hex::decode(EVM_KEYS[n]).expect("hex")).expect("a key")
    }

    fn account(n: usize, chain: u64) -> String {
        let address = checksummed(&address_of(evm_key(n).verifying_key()));
        format!("eip155:{chain}:{address}")
    }

    /// `personal_sign`: r ‖ s ‖ v with v 27/28.
    fn personal_sign(key: &EvmKey, text: &str) -> AccountSig {
        let (sig, recovery) = key.sign_prehash_recoverable(&personal_message_hash(text.as_bytes()));
        let mut out = [0u8; 65];
        out[..64].copy_from_slice(&sig.to_bytes());
        out[64] = 27 + recovery.to_byte();
        AccountSig(out)
    }

    fn person() -> ed25519_dalek::SigningKey {
        testing::key(101)
    }

    fn bot() -> ed25519_dalek::SigningKey {
        testing::key(102)
    }

    fn signed(identity: &ed25519_dalek::SigningKey, evm: &EvmKey, account: &str) -> SignedLink {
        let link = AccountLink::new(params_digest(), testing::identity_id(identity), account, 11)
            .expect("a valid account");
        SignedLink {
            identity_sig: link.sign_identity(identity),
            account_sig: personal_sign(evm, &link.text()),
            link,
        }
    }

    /// How Rust judges a signed link given as JSON: the account first (as deserializing
    /// does, with its code), then both signatures.
    fn judge_link(body: &Value) -> Value {
        let account = body["link"]["account"].as_str().expect("an account");
        let verdict = AccountId::parse(account)
            .map_err(LinkError::from)
            .and_then(|_| {
                let s: SignedLink = serde_json::from_value(body.clone()).expect("a signed link");
                s.verify()
            });
        match verdict {
            Ok(()) => json!({ "ok": true }),
            Err(e) => json!({ "code": e.code() }),
        }
    }

    struct Window {
        certificate: WindowCertificate,
        members: Vec<(IdentityId, Class, MembershipProof)>,
        links: LinkSet,
    }

    fn window(t: u64, links: Vec<(AccountId, IdentityId)>) -> Window {
        let active = vec![
            (testing::identity_id(&person()), Class::Human),
            (testing::identity_id(&bot()), Class::Agent),
            (testing::identity_id(&testing::key(103)), Class::Human),
        ];
        let (summary, set, links) = WindowSummary::with_links(t, active, links, params_digest());
        let signed: Vec<SignedSummary> = [1, 2, 3]
            .iter()
            .map(|n| SignedSummary::new(&testing::key(*n), summary.clone()))
            .collect();
        let certificate = assemble(&signed, QUORUM).expect("a quorum signed");
        let members = set
            .ids()
            .iter()
            .map(|id| {
                let proof = set.proof(id).expect("a member");
                (*id, proof.class, proof)
            })
            .collect();
        Window {
            certificate,
            members,
            links,
        }
    }

    struct Linked<'a> {
        certificate: &'a WindowCertificate,
        account: String,
        id: IdentityId,
        link: LinkProof,
        membership: MembershipProof,
        class: Class,
    }

    /// One `verify_linked` as the Rust light verifier judges it.
    fn judge_linked(name: &str, c: Linked<'_>) -> Value {
        let verifier = LightVerifier::new(committee(), QUORUM)
            .expect("a strict majority")
            .with_params(params_digest());
        let verdict = verifier.verify_linked(
            c.certificate,
            &c.account,
            &c.id,
            &c.link,
            &c.membership,
            c.class,
        );
        json!({
            "name": name,
            "certificate": c.certificate,
            "account": c.account,
            "identity": c.id,
            "link_proof": c.link,
            "membership_proof": c.membership,
            "class": c.class,
            "expect": match verdict {
                Ok(()) => json!({ "ok": true }),
                Err(e) => json!({ "code": e.code() }),
            },
        })
    }

    pub fn fixture() -> Value {
        let person_id = testing::identity_id(&person());
        let bot_id = testing::identity_id(&bot());
        let idle_id = testing::identity_id(&testing::key(106));
        let wallet = account(0, 1);
        let bot_wallet = account(1, 1);
        let good = signed(&person(), &evm_key(0), &wallet);
        assert_eq!(good.verify(), Ok(()), "the fixture link verifies in Rust");
        let good_json = serde_json::to_value(&good).expect("json");

        let edit = |f: &dyn Fn(&mut Value)| {
            let mut v = good_json.clone();
            f(&mut v);
            v
        };
        let lower = wallet.to_lowercase();
        let bad_checksum = {
            // One checksum letter's case flipped.
            let at = wallet
                .rfind(|c: char| c.is_ascii_uppercase())
                .expect("a capital");
            let mut s = wallet.clone().into_bytes();
            s[at] = s[at].to_ascii_lowercase();
            String::from_utf8(s).expect("ascii")
        };
        let other_namespace = "cosmos:cosmoshub-4:cosmos1t2uflqwqe0fsj0shcfkrvpukewcw40yjj6hdc0";
        // A link for the Hardhat #1 address signed by the #0 key, the identity's part valid.
        let wrong_account = signed(&person(), &evm_key(0), &bot_wallet);
        let wrong_account = SignedLink {
            account_sig: personal_sign(&evm_key(0), &wrong_account.link.text()),
            ..wrong_account
        };
        let high_s = {
            // s' = n − s with the other parity: the same point, malleable, refused.
            const N: [u8; 32] = [
                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c,
                0xd0, 0x36, 0x41, 0x41,
            ];
            let mut out = good.account_sig.0;
            let mut borrow = 0i16;
            for i in (0..32).rev() {
                let d = i16::from(N[i]) - i16::from(good.account_sig.0[32 + i]) - borrow;
                out[32 + i] = d.rem_euclid(256) as u8;
                borrow = i16::from(d < 0);
            }
            out[64] ^= 1;
            AccountSig(out)
        };
        let link_cases: Vec<(&str, Value)> = vec![
            ("a link signed by both keys", good_json.clone()),
            (
                "the account spelled with its EIP-55 checksum (the text signs the canonical one)",
                edit(&|v| v["link"]["account"] = json!(wallet)),
            ),
            (
                "v as 0/1 rather than 27/28",
                edit(&|v| {
                    let mut sig = good.account_sig;
                    sig.0[64] -= 27;
                    v["account_sig"] = json!(sig);
                }),
            ),
            (
                "the wallet's 0x-prefixed signature",
                edit(&|v| {
                    v["account_sig"] = json!(format!("0x{}", good.account_sig));
                }),
            ),
            (
                "another account than the one that signed",
                serde_json::to_value(&wrong_account).expect("json"),
            ),
            (
                "the account changed after signing",
                edit(&|v| v["link"]["account"] = json!(bot_wallet.to_lowercase())),
            ),
            (
                "the identity signature of another key",
                edit(&|v| {
                    v["identity_sig"] = json!(good.link.sign_identity(&bot()));
                }),
            ),
            (
                "a flipped bit in the identity signature",
                edit(&|v| {
                    let mut sig = good.identity_sig;
                    sig.0[10] ^= 4;
                    v["identity_sig"] = json!(sig);
                }),
            ),
            (
                "the window changed after signing",
                edit(&|v| v["link"]["from_window"] = json!(12)),
            ),
            (
                "a flipped bit in the account signature",
                edit(&|v| {
                    let mut sig = good.account_sig;
                    sig.0[5] ^= 0x10;
                    v["account_sig"] = json!(sig);
                }),
            ),
            (
                "the other recovery parity",
                edit(&|v| {
                    let mut sig = good.account_sig;
                    sig.0[64] ^= 1;
                    v["account_sig"] = json!(sig);
                }),
            ),
            (
                "v outside 27/28 and 0/1",
                edit(&|v| {
                    let mut sig = good.account_sig;
                    sig.0[64] = 29;
                    v["account_sig"] = json!(sig);
                }),
            ),
            (
                "the high-s twin of the account signature",
                edit(&|v| v["account_sig"] = json!(high_s)),
            ),
            (
                "a mixed-case address failing its checksum",
                edit(&|v| v["link"]["account"] = json!(bad_checksum)),
            ),
            (
                "another namespace",
                edit(&|v| v["link"]["account"] = json!(other_namespace)),
            ),
            (
                "an address one digit short",
                edit(&|v| v["link"]["account"] = json!(&lower[..lower.len() - 1])),
            ),
        ];

        let links = vec![
            (AccountId::parse(&wallet).expect("valid"), person_id),
            (AccountId::parse(&bot_wallet).expect("valid"), bot_id),
            (AccountId::parse(&account(0, 137)).expect("valid"), idle_id),
        ];
        let w11 = window(11, links);
        // Window 12: only the bot's wallet linked.
        let w12 = window(
            12,
            vec![(AccountId::parse(&bot_wallet).expect("valid"), bot_id)],
        );
        let member = |w: &Window, id: &IdentityId| {
            w.members
                .iter()
                .find(|(m, _, _)| m == id)
                .map(|(_, _, p)| p.clone())
                .expect("a member")
        };
        let link = |w: &Window, a: &str| {
            w.links
                .proof(&AccountId::parse(a).expect("valid"))
                .expect("linked")
        };
        let base = |account: &str, id: IdentityId, class: Class| Linked {
            certificate: &w11.certificate,
            account: account.to_owned(),
            id,
            link: link(&w11, account),
            membership: member(&w11, &id),
            class,
        };
        let mut tampered_root = w11.certificate.clone();
        tampered_root.summary.links_root.0[0] ^= 1;
        let mut flipped = link(&w11, &wallet);
        flipped.path.siblings[0].0[31] ^= 0x80;
        let w12_person = member(&w12, &person_id);
        let linked_cases = vec![
            judge_linked(
                "a person's wallet, asked as human",
                base(&wallet, person_id, Class::Human),
            ),
            judge_linked(
                "a person's wallet, asked in lower case",
                Linked {
                    account: lower.clone(),
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
            judge_linked(
                "an agent's wallet, asked as agent",
                base(&bot_wallet, bot_id, Class::Agent),
            ),
            judge_linked(
                "an agent's wallet, asked as human",
                base(&bot_wallet, bot_id, Class::Human),
            ),
            judge_linked(
                "another account's link proof",
                Linked {
                    link: link(&w11, &bot_wallet),
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
            judge_linked(
                "the wallet claimed for another identity",
                Linked {
                    id: bot_id,
                    membership: member(&w11, &bot_id),
                    ..base(&wallet, person_id, Class::Agent)
                },
            ),
            judge_linked(
                "a flipped bit in the link path",
                Linked {
                    link: flipped,
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
            judge_linked(
                "window 11's link proof with window 12's certificate",
                Linked {
                    certificate: &w12.certificate,
                    membership: w12_person,
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
            judge_linked(
                "linked, but the identity was not active (a member's proof)",
                Linked {
                    certificate: &w11.certificate,
                    account: account(0, 137),
                    id: idle_id,
                    link: link(&w11, &account(0, 137)),
                    membership: member(&w11, &person_id),
                    class: Class::Human,
                },
            ),
            judge_linked(
                "the certificate's links_root changed",
                Linked {
                    certificate: &tampered_root,
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
            judge_linked(
                "a mixed-case address failing its checksum",
                Linked {
                    account: bad_checksum.clone(),
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
            judge_linked(
                "another namespace",
                Linked {
                    account: other_namespace.to_owned(),
                    ..base(&wallet, person_id, Class::Human)
                },
            ),
        ];

        let windows: Vec<Value> = [&w11, &w12]
            .iter()
            .map(|w| {
                json!({
                    "t": w.certificate.summary.t,
                    "summary_digest": summary_digest(&w.certificate.summary),
                    "certificate": w.certificate,
                    "links": w.links.links().map(|(a, i)| json!({
                        "account": a,
                        "identity": i,
                        "leaf": link_leaf(a, i),
                        "proof": w.links.proof(a).expect("linked"),
                    })).collect::<Vec<_>>(),
                    "members": w.members.iter().map(|(id, class, proof)| json!({
                        "id": id, "class": class, "proof": proof,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();

        json!({
            "about": "Made by oracle/tests/it/js_fixtures.rs from the Rust code (each case judged by SignedLink::verify or LightVerifier::verify_linked); do not edit by hand.",
            "params": {
                "digest": params_digest(),
                "params": { "committee": committee(), "quorum": QUORUM },
            },
            "signed_link": {
                "body": good_json,
                "text": good.link.text(),
                "identity_digest": good.link.signing_digest(),
                "personal_hash": hex::encode(personal_message_hash(good.link.text().as_bytes())),
                "address": checksummed(&address_of(evm_key(0).verifying_key())),
            },
            "windows": windows,
            "link_cases": link_cases.into_iter().map(|(name, body)| json!({
                "name": name,
                "expect": judge_link(&body),
                "body": body,
            })).collect::<Vec<_>>(),
            "linked_cases": linked_cases,
        })
    }

    #[test]
    fn a_window_without_links_commits_to_the_empty_set() {
        let w = window(13, Vec::new());
        assert!(w.links.is_empty());
        assert_eq!(
            w.certificate.summary.links_root,
            hco_oracle::merkle::empty_root()
        );
    }
}
