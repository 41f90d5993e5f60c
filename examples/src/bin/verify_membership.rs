//! Checks that an identity was active in a window, offline.
//!
//! ```text
//! verify_membership --params params.json --proof proof.json --id <hex>
//! ```
//!
//! `params.json` is what `GET /v1/params` returns (fetch it once and pin it: it names the
//! committee keys and the quorum); `proof.json` is what `GET /v1/windows/{t}/proofs/{id}` returns.
//! Prints one JSON line and exits 0 when the identity is proven active, 1 otherwise.

use anyhow::{Context, bail};
use hco_oracle::{IdentityId, LightVerifier, MembershipProof, NetworkParams, WindowCertificate};
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
        LightVerifier::new(params.committee.clone(), params.quorum).with_params(params.digest());
    match verifier.verify_membership(&certificate, &id, &membership) {
        Ok(()) => {
            println!(
                "{}",
                json!({ "active": true, "id": id, "window": certificate.summary.t, "active_identities": certificate.summary.count })
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
