//! `hco client link` and `hco client linked`: binding an EVM account to an identity, and
//! checking offline that an account's identity was active (as a class) in a certified window.
//!
//! Linking takes two signatures over one text (`hco_verify::link`): the identity's, made here
//! with its key file, and the account's EIP-191 `personal_sign`, made in the account's wallet.
//! `--print-text` prints the text to sign (with the first window it names, the next one by
//! default); `--account-sig` then hands the wallet's signature over, and the node records the
//! link from that window on.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Args;
use hco_oracle::link::{AccountLink, SignedLink};
use hco_oracle::{AccountSig, Class, LightVerifier, LinkedProof, NetworkParams};
use serde_json::{Value, json};

use super::http::Gateway;
use crate::keyfile::{self, KeyKind};

/// `hco client link`.
#[derive(Debug, Args)]
pub struct LinkArgs {
    /// Node URL.
    #[arg(long)]
    pub node: String,
    /// The identity's key file.
    #[arg(long)]
    pub key: PathBuf,
    /// The account, CAIP-10 (`eip155:1:0x…`; EIP-55 case or all one case).
    #[arg(long)]
    pub account: String,
    /// The first window the link is for (default: the window after the current one).
    #[arg(long)]
    pub from_window: Option<u64>,
    /// Print the text the account's wallet signs (`personal_sign`) and stop.
    #[arg(long, conflicts_with = "account_sig")]
    pub print_text: bool,
    /// The wallet's `personal_sign` signature of that text (65 bytes, hex, `0x` optional).
    #[arg(long)]
    pub account_sig: Option<AccountSig>,
}

/// `hco client linked`.
#[derive(Debug, Args)]
pub struct LinkedArgs {
    /// Node URL.
    #[arg(long)]
    pub node: String,
    /// The account, CAIP-10.
    #[arg(long)]
    pub account: String,
    /// Window.
    #[arg(long)]
    pub window: u64,
    /// Network parameters JSON to trust (as served by GET /v1/params); by default they are
    /// fetched from the node, which then is trusted for the committee keys.
    #[arg(long)]
    pub params: Option<PathBuf>,
    /// The class the account's identity must have been active as.
    #[arg(long, default_value = "human")]
    pub class: Class,
}

/// Prints the statement's text, or records the link at the node.
pub fn link(args: LinkArgs) -> anyhow::Result<()> {
    let key = keyfile::read(&args.key, KeyKind::IdentityKey)?;
    let gw = Gateway::client(&args.node);
    let params = gw.get("/v1/params")?.body;
    let network = serde_json::from_value(params["digest"].clone())
        .context("the node's /v1/params has no digest")?;
    let from_window = match args.from_window {
        Some(t) => t,
        None => {
            let current = gw.get("/v1/windows/current")?.body["t"]
                .as_u64()
                .context("the node's current window has no t")?;
            current + 1
        }
    };
    let identity = hco_oracle::IdentityId(key.verifying_key().to_bytes());
    let link = AccountLink::new(network, identity, &args.account, from_window)
        .map_err(|e| anyhow::anyhow!("{}: {e}", e.code()))?;
    if args.print_text {
        println!("{}", link.text());
        return Ok(());
    }
    let Some(account_sig) = args.account_sig else {
        bail!(
            "pass --account-sig with the wallet's personal_sign of the text --print-text shows \
             (with the same --from-window {from_window})"
        );
    };
    let signed = SignedLink {
        identity_sig: link.sign_identity(&key),
        link,
        account_sig,
    };
    signed
        .verify()
        .map_err(|e| anyhow::anyhow!("{}: {e}", e.code()))?;
    match gw.post("/v1/links", &signed)?.into_result::<Value>() {
        Ok(body) => {
            println!(
                "{}",
                json!({ "linked": true, "account": signed.link.account, "id": identity, "from_window": from_window, "new": body["new"] })
            );
            Ok(())
        }
        Err((code, message)) => bail!("{code}: {message}"),
    }
}

/// Fetches the account's link proof of a window and checks it offline: exit 0 and `valid`
/// when the account was linked to an identity active as the class, 2 otherwise.
pub fn linked(args: LinkedArgs) -> anyhow::Result<()> {
    let gw = Gateway::client(&args.node);
    let params: Value = match &args.params {
        Some(path) => serde_json::from_slice(
            &std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?,
        )?,
        None => gw.get("/v1/params")?.body,
    };
    let params: NetworkParams =
        serde_json::from_value(params["params"].clone()).context("not a /v1/params document")?;
    let t = args.window;
    let served: Result<LinkedProof, _> = gw
        .get(&format!("/v1/windows/{t}/links/{}", args.account))?
        .into_result();
    let verdict = match served {
        Err((code, message)) => Err((code, message)),
        Ok(p) => LightVerifier::new(params.committee.clone(), params.quorum)?
            .with_params(params.digest())
            .verify_linked(
                &p.certificate,
                &args.account,
                &p.link.identity,
                &p.link,
                &p.proof,
                args.class,
            )
            .map(|()| p)
            .map_err(|e| (e.code().to_owned(), e.to_string())),
    };
    match verdict {
        Ok(p) => {
            println!(
                "{}",
                json!({ "valid": true, "account": p.link.account, "id": p.link.identity, "class": args.class, "window": t })
            );
            Ok(())
        }
        Err((code, message)) => {
            println!(
                "{}",
                json!({ "valid": false, "code": code, "message": message })
            );
            std::process::exit(2);
        }
    }
}
