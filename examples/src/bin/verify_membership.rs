//! Checks that an identity was active in a window, offline.
//!
//! ```text
//! verify_membership --params params.json --proof proof.json --id <hex> [--class human|agent]
//! ```
//!
//! `params.json` is what `GET /v1/params` returns (fetch it once and pin it: it names the
//! committee keys, the quorum and the parameters' digest); `proof.json` is what
//! `GET /v1/windows/{t}/proofs/{id}` returns. It links `hco-verify` alone (no_std, 29 crates),
//! as a chain runtime or a contract would.
//! The certified leaf commits to the class the identity was active as: a DAO gating people
//! passes `--class human` ([`was_active_human`]), so an agent-class identity never counts.
//! Prints one JSON line and exits 0 when the identity is proven active (as that class), 1
//! otherwise.

use anyhow::{Context, bail};
use hco_verify::{
    CertError, Class, Digest, IdentityId, LightVerifier, MembershipProof, NodeId, WindowCertificate,
};
use serde_json::{Value, json};

fn arg(args: &[String], name: &str) -> anyhow::Result<String> {
    let i = args
        .iter()
        .position(|a| a == name)
        .with_context(|| format!("missing {name}"))?;
    args.get(i + 1)
        .cloned()
        .with_context(|| format!("{name} needs a value"))
}

fn read(path: &str) -> anyhow::Result<Value> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {path}"))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{path} is not JSON"))
}

/// Whether `id` was active in the certificate's window as a person: the committee's signatures,
/// the Merkle path, and the class committed to in the leaf.
fn was_active_human(
    verifier: &LightVerifier,
    certificate: &WindowCertificate,
    id: &IdentityId,
    proof: &MembershipProof,
) -> Result<(), CertError> {
    verifier.verify_member_of_class(certificate, id, Class::Human, proof)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let pinned = read(&arg(&args, "--params")?)?;
    let committee: Vec<NodeId> = serde_json::from_value(pinned["params"]["committee"].clone())
        .context("--params must be the body of GET /v1/params (params.committee)")?;
    let quorum = pinned["params"]["quorum"]
        .as_u64()
        .and_then(|q| u32::try_from(q).ok())
        .context("--params must carry params.quorum")?;
    let digest: Digest = serde_json::from_value(pinned["digest"].clone())
        .context("--params must carry the parameters' digest")?;
    let proof = read(&arg(&args, "--proof")?)?;
    let certificate: WindowCertificate = serde_json::from_value(proof["certificate"].clone())?;
    let membership: MembershipProof = serde_json::from_value(proof["proof"].clone())?;
    let id: IdentityId = arg(&args, "--id")?.parse().map_err(anyhow::Error::msg)?;

    // The whole check: committee signatures on the window summary, then the Merkle path.
    let verifier = LightVerifier::new(committee, quorum)?.with_params(digest);
    let class: Option<Class> = match arg(&args, "--class") {
        Ok(c) => Some(c.parse().map_err(anyhow::Error::msg)?),
        Err(_) => None,
    };
    let checked = match class {
        Some(Class::Human) => {
            was_active_human(&verifier, &certificate, &id, &membership).map(|()| Class::Human)
        }
        Some(other) => verifier
            .verify_member_of_class(&certificate, &id, other, &membership)
            .map(|()| other),
        None => verifier.verify_membership(&certificate, &id, &membership),
    };
    match checked {
        Ok(class) => {
            println!(
                "{}",
                json!({ "active": true, "id": id, "class": class, "window": certificate.summary.t, "active_identities": certificate.summary.count })
            );
            Ok(())
        }
        Err(e) => {
            println!(
                "{}",
                json!({ "active": false, "code": e.code(), "message": e.to_string() })
            );
            bail!("not proven active: {e}")
        }
    }
}
