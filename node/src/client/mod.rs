//! `hco client …`: register an identity, solve this window's challenge, fetch and check a proof.
//! Talks to any node's HTTP gateway; the node forwards to the assigned issuer.

mod agent;
pub mod http;
mod link;
mod solve;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Subcommand;
use hco_challenges::Class;
use hco_oracle::{Clock, IdentityId, LightVerifier, NetworkParams, SignedRegister, SystemClock};
use serde_json::{Value, json};

pub use agent::signed_start;
pub use http::{Gateway, Reply};

use crate::api::ProofView;
use crate::keyfile::{self, KeyKind};

/// Client commands.
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Register an identity key with the network.
    Register {
        /// Node URL, e.g. http://127.0.0.1:8080.
        #[arg(long)]
        node: String,
        /// Identity key file (hco identity new).
        #[arg(long)]
        key: PathBuf,
        /// human or agent.
        #[arg(long)]
        class: Class,
    },
    /// Run this window's step sequence: request each challenge when it opens, solve it,
    /// respond, and print each verdict as a JSON line; exits 0 when every step passed.
    Solve {
        /// Node URL.
        #[arg(long)]
        node: String,
        /// Identity key file.
        #[arg(long)]
        key: PathBuf,
        /// A command that reads {challenge, prompt: {family, text, data}} as JSON on stdin and
        /// prints the answer on stdout (trimmed); a non-zero exit stops the client. Without
        /// it, the family's built-in solver is used where there is one.
        #[arg(long)]
        answer_cmd: Option<String>,
        /// Started before the identity's ceremony slot, wait this long at most for it to open
        /// (never past the window's close); a slot further off is reported, not waited for.
        #[arg(long, default_value = "2h", value_parser = humantime::parse_duration)]
        max_wait: Duration,
    },
    /// Play an agent-admission session, calling CMD once per round.
    Agent {
        /// Node URL; repeat it to name other members, tried in turn when one refuses the start
        /// with `game_not_here` (its share of the window's questions makes no session) or
        /// `game_busy`.
        #[arg(long, required = true)]
        node: Vec<String>,
        /// Reads {round, domain, narrative, question, budget_ms (τ), earlier_rounds} as JSON on
        /// stdin and prints the answer on stdout (trimmed) within τ; a non-zero exit ends the
        /// session (`scripts/llm-agent` is one for any OpenAI-compatible model).
        #[arg(long)]
        answer_cmd: String,
        /// The agent identity's key file (registered as an agent): it signs the session's
        /// start, and the credential names it.
        #[arg(long)]
        key: PathBuf,
        /// Where to save the credential.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Admission credentials.
    #[command(subcommand)]
    Admission(AdmissionCommand),
    /// Fetch an identity's certificate and membership proof and check them offline.
    Proof {
        /// Node URL.
        #[arg(long)]
        node: String,
        /// Identity id (hex).
        #[arg(long)]
        id: IdentityId,
        /// Window.
        #[arg(long)]
        window: u64,
        /// Network parameters JSON to trust (as served by GET /v1/params); by default they are
        /// fetched from the node, which then is trusted for the committee keys.
        #[arg(long)]
        params: Option<PathBuf>,
        /// Require the identity to have been active as this class (`human` to gate people).
        #[arg(long)]
        class: Option<Class>,
    },
    /// Link an EVM account to the identity (from the next window on): `--print-text` prints
    /// what the account's wallet signs, `--account-sig` hands the signature over.
    Link(link::LinkArgs),
    /// Check offline that an account was linked to an identity active as a class (human by
    /// default) in a certified window: exit 0 and `valid: true`, or 2.
    Linked(link::LinkedArgs),
}

/// Admission credentials.
#[derive(Debug, Subcommand)]
pub enum AdmissionCommand {
    /// Verify a credential offline against the issuing node's key. Prints one JSON object
    /// (`valid`, `status`: `valid`, `invalid` or `unpinned`, the credential's claims) and exits
    /// 2 unless the credential is valid.
    Verify {
        /// The credential file (JSON, as saved by `hco client agent --out`).
        file: PathBuf,
        /// The issuing node's key (hex; its operator publishes it, and the committee's are in
        /// GET /v1/params). Needed for `valid: true`: without it the credential is `unpinned`
        /// (not valid, exit 2), since any key signs one that verifies under the key it names.
        #[arg(long)]
        node_key: Option<hco_oracle::NodeId>,
    },
}

/// Runs a client command.
pub fn run(cmd: ClientCommand) -> anyhow::Result<()> {
    match cmd {
        ClientCommand::Register { node, key, class } => register(&node, &key, class),
        ClientCommand::Solve {
            node,
            key,
            answer_cmd,
            max_wait,
        } => {
            if !solve::solve(&node, &key, answer_cmd.as_deref(), max_wait)? {
                std::process::exit(2);
            }
            Ok(())
        }
        ClientCommand::Agent {
            node,
            answer_cmd,
            key,
            out,
        } => {
            let key = keyfile::read(&key, KeyKind::IdentityKey)?;
            if !agent::play(&node, &answer_cmd, &key, out.as_deref())? {
                std::process::exit(2);
            }
            Ok(())
        }
        ClientCommand::Admission(AdmissionCommand::Verify { file, node_key }) => {
            if !agent::verify(&file, node_key)? {
                std::process::exit(2);
            }
            Ok(())
        }
        ClientCommand::Proof {
            node,
            id,
            window,
            params,
            class,
        } => proof(&node, &id, window, params, class),
        ClientCommand::Link(args) => link::link(args),
        ClientCommand::Linked(args) => link::linked(args),
    }
}

/// `--answer-cmd`: runs `cmd` with `input` on stdin; its trimmed stdout is the answer.
fn run_answer_cmd(cmd: &str, input: &Value) -> anyhow::Result<String> {
    let mut child = Command::new("sh")
        .args(["-c", cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run --answer-cmd `{cmd}`"))?;
    let written = child
        .stdin
        .take()
        .context("stdin")?
        .write_all(&serde_json::to_vec(input)?);
    // A command that answers without reading its input (or exits first) closes the pipe:
    // that is its choice, not an error; its exit status and output decide.
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("--answer-cmd exited with {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn register(node: &str, key: &std::path::Path, class: Class) -> anyhow::Result<()> {
    let key = keyfile::read(key, KeyKind::IdentityKey)?;
    let gw = Gateway::client(node);
    // The network's registration proof of work (absent from older nodes: none).
    let params = gw.get("/v1/params")?;
    let pow_bits = params.body["params"]["registration_pow_bits"]
        .as_u64()
        .unwrap_or(0) as u32;
    let reg = SignedRegister::proven(&key, class.into(), SystemClock.now(), pow_bits);
    let reply = gw.post("/v1/identities", &reg)?;
    match reply.into_result::<Value>() {
        Ok(body) => println!("{body}"),
        Err((code, message)) => bail!("registration refused: {code}: {message}"),
    }
    Ok(())
}

fn proof(
    node: &str,
    id: &IdentityId,
    t: u64,
    params: Option<PathBuf>,
    class: Option<Class>,
) -> anyhow::Result<()> {
    let gw = Gateway::client(node);
    let params: Value = match params {
        Some(path) => serde_json::from_slice(
            &std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?,
        )?,
        None => gw.get("/v1/params")?.body,
    };
    let params: NetworkParams =
        serde_json::from_value(params["params"].clone()).context("not a /v1/params document")?;
    let view: ProofView = match gw
        .get(&format!("/v1/windows/{t}/proofs/{id}"))?
        .into_result()
    {
        Ok(v) => v,
        Err((code, message)) => bail!("no proof: {code}: {message}"),
    };
    let verifier =
        LightVerifier::new(params.committee.clone(), params.quorum)?.with_params(params.digest());
    let checked = match class {
        Some(class) => verifier
            .verify_member_of_class(&view.certificate, id, class, &view.proof)
            .map(|()| class),
        None => verifier.verify_membership(&view.certificate, id, &view.proof),
    };
    match checked {
        Ok(class) => {
            println!(
                "{}",
                json!({ "valid": true, "id": id, "class": class, "window": t, "root": view.certificate.summary.root, "signers": view.certificate.signatures.len(), "active": view.certificate.summary.count })
            );
            Ok(())
        }
        Err(e) => {
            println!(
                "{}",
                json!({ "valid": false, "code": e.code(), "message": e.to_string() })
            );
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_command_reads_the_json_on_stdin_and_its_trimmed_stdout_is_the_answer() {
        let input = json!({ "prompt": { "text": "two" } });
        let answer = run_answer_cmd("read -r line; echo \"  got $line  \"", &input).unwrap();
        assert_eq!(answer, r#"got {"prompt":{"text":"two"}}"#);
        let err = run_answer_cmd("exit 3", &input).unwrap_err();
        assert!(err.to_string().contains("exited with"), "{err}");
        // A command that never reads stdin still answers, whenever it closes the pipe.
        for _ in 0..20 {
            assert_eq!(run_answer_cmd("echo 42", &input).unwrap(), "42");
            let err = run_answer_cmd("exec 0<&-; exit 3", &input).unwrap_err();
            assert!(err.to_string().contains("exited with"), "{err}");
        }
    }
}
