//! The fixtures of the JavaScript verifier (`js/test/fixtures/`), made here by the Rust code:
//! real window certificates and membership proofs of a four-member committee, in the gateway's
//! JSON shapes, and tampered variants judged by the Rust light verifier. The test fails when
//! the committed files differ from what the code makes, so the two verifiers cannot drift apart;
//! `HCO_WRITE_JS_FIXTURES=1 cargo test -p hco-oracle --test it js_fixtures` rewrites them.

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
        "hco window summary v1",
        &[
            &[s.version],
            &s.t.to_be_bytes(),
            &s.root.0,
            &s.count.to_be_bytes(),
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
