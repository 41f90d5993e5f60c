//! Checks that an identity was active in a window, offline.
//!
//! ```text
//! verify_membership --params params.json --proof proof.json --id <hex> [--class human|agent]
//! ```
//!
//! `params.json` is what `GET /v1/params` returns (fetch it once and pin it: it names the
//! committee keys and the quorum); `proof.json` is what `GET /v1/windows/{t}/proofs/{id}` returns.
//! The certified leaf commits to the class the identity was active as: a DAO gating people
//! passes `--class human` ([`was_active_human`]), so an agent-class identity never counts.
//! Prints one JSON line and exits 0 when the identity is proven active (as that class), 1
//! otherwise.

use anyhow::{Context, bail};
use hco_oracle::{
    CertError, Class, IdentityId, LightVerifier, MembershipProof, NetworkParams, WindowCertificate,
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
    let params: NetworkParams =
        serde_json::from_value(read(&arg(&args, "--params")?)?["params"].clone())
            .context("--params must be the body of GET /v1/params")?;
    let proof = read(&arg(&args, "--proof")?)?;
    let certificate: WindowCertificate = serde_json::from_value(proof["certificate"].clone())?;
    let membership: MembershipProof = serde_json::from_value(proof["proof"].clone())?;
    let id: IdentityId = arg(&args, "--id")?.parse().map_err(anyhow::Error::msg)?;

    // The whole check: committee signatures on the window summary, then the Merkle path.
    let verifier =
        LightVerifier::new(params.committee.clone(), params.quorum)?.with_params(params.digest());
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
