//! `hco client …`: register an identity, solve this window's challenge, fetch and check a proof.
//! Talks to any node's HTTP gateway; the node forwards to the assigned issuer.

mod agent;
pub mod http;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use clap::Subcommand;
use hco_challenges::{Class, Prompt, Registry};
use hco_oracle::{
    Clock, IdentityId, LightVerifier, NetworkParams, Response, SignedRegister, SignedRequest,
    SystemClock,
};
use serde_json::{Value, json};

pub use http::{Gateway, Reply};

use crate::api::{ChallengeView, ProofView, VerdictView};
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
        /// A command that reads the prompt as JSON on stdin and prints the answer on stdout.
        /// Without it, the family's built-in solver is used where there is one.
        #[arg(long)]
        answer_cmd: Option<String>,
    },
    /// Play an agent-admission session, calling CMD once per round.
    Agent {
        /// Node URL.
        #[arg(long)]
        node: String,
        /// Reads {round, domain, narrative, question, earlier_rounds} as JSON on stdin and
        /// prints the answer.
        #[arg(long)]
        answer_cmd: String,
        /// Identity to name in the credential.
        #[arg(long)]
        identity: Option<IdentityId>,
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
}

/// Admission credentials.
#[derive(Debug, Subcommand)]
pub enum AdmissionCommand {
    /// Verify a credential offline.
    Verify {
        /// The credential file (JSON, as saved by `hco client agent --out`).
        file: PathBuf,
        /// The node key to trust (hex); without it any node's valid signature is reported.
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
        } => {
            if !solve(&node, &key, answer_cmd.as_deref())? {
                std::process::exit(2);
            }
            Ok(())
        }
        ClientCommand::Agent {
            node,
            answer_cmd,
            identity,
            out,
        } => {
            if !agent::play(&node, &answer_cmd, identity, out.as_deref())? {
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
    }
}

fn register(node: &str, key: &std::path::Path, class: Class) -> anyhow::Result<()> {
    let key = keyfile::read(key, KeyKind::IdentityKey)?;
    let gw = Gateway::new(node);
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

/// Runs the window's sequence; true when every step passed.
fn solve(node: &str, key: &std::path::Path, answer_cmd: Option<&str>) -> anyhow::Result<bool> {
    let key = keyfile::read(key, KeyKind::IdentityKey)?;
    let id = IdentityId(key.verifying_key().to_bytes());
    let gw = Gateway::new(node);
    let window = gw.get(&format!("/v1/windows/current?id={id}"))?;
    let t = window.body["t"]
        .as_u64()
        .context("the node did not report the current window")?;
    let mut j = window.body["identity"]["next_j"].as_u64().unwrap_or(0) as u32;
    let closes_at = window.body["closes_at"].as_u64().unwrap_or(0);
    // Steps of the class's window and how many have passed: once all have, the window is won
    // and the client stops, rather than asking for one more and hearing, if the window closed
    // meanwhile, `wrong_window`.
    let steps = window.body["identity"]["steps"].as_u64();
    let mut passed = window.body["identity"]["steps_passed"]
        .as_u64()
        .unwrap_or(0);
    let line = |value: Value| println!("{value}");
    let mut answered_any = false;
    loop {
        if answered_any && steps.is_some_and(|steps| passed >= steps) {
            return Ok(true);
        }
        let reply = gw.post("/v1/challenges", &SignedRequest::new(&key, t, j))?;
        let opens_at = reply.body["opens_at"].as_u64().unwrap_or(0);
        let view: ChallengeView = match reply.into_result() {
            Ok(v) => v,
            Err((code, message)) => {
                match code.as_str() {
                    // Wait for the step's moment in the slot, then ask again.
                    "step_not_open" => {
                        let now = SystemClock.now();
                        if opens_at == 0 || opens_at >= closes_at {
                            line(
                                json!({ "verdict": code, "message": message, "window": t, "j": j }),
                            );
                            return Ok(false);
                        }
                        std::thread::sleep(std::time::Duration::from_millis(
                            opens_at.saturating_sub(now) + 50,
                        ));
                        continue;
                    }
                    "steps_complete" => {
                        // Said only when this run answered nothing: the last verdict stands.
                        if !answered_any {
                            line(
                                json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j }),
                            );
                        }
                        return Ok(true);
                    }
                    _ => {
                        line(
                            json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j }),
                        );
                        return Ok(false);
                    }
                }
            }
        };
        let family = view.prompt.family.clone();
        let answer = answer(&view, answer_cmd)?;
        let response = Response::new(&key, view.challenge, answer);
        answered_any = true;
        match gw
            .post("/v1/responses", &response)?
            .into_result::<VerdictView>()
        {
            Ok(v) => {
                passed += 1;
                line(
                    json!({ "verdict": v.verdict, "id": v.id, "window": v.window, "j": v.j, "family": v.family, "accepted_at": v.accepted_at }),
                )
            }
            Err((code, message)) => line(
                json!({ "verdict": code, "message": message, "id": id, "window": t, "j": j, "family": family }),
            ),
        }
        j += 1;
    }
}

fn answer(view: &ChallengeView, answer_cmd: Option<&str>) -> anyhow::Result<Vec<u8>> {
    if let Some(cmd) = answer_cmd {
        let mut child = Command::new("sh")
            .args(["-c", cmd])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run --answer-cmd `{cmd}`"))?;
        let prompt =
            serde_json::to_vec(&json!({ "challenge": view.challenge, "prompt": view.prompt }))?;
        child.stdin.take().context("stdin")?.write_all(&prompt)?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!("--answer-cmd exited with {}", out.status);
        }
        return Ok(String::from_utf8_lossy(&out.stdout)
            .trim()
            .as_bytes()
            .to_vec());
    }
    let prompt = Prompt {
        family: view.prompt.family.clone(),
        text: view.prompt.text.clone(),
        data: match &view.prompt.data {
            Value::String(s) => hex::decode(s).unwrap_or_else(|_| s.as_bytes().to_vec()),
            other => serde_json::to_vec(other)?,
        },
    };
    let registry = Registry::builtin();
    let family = registry.get(&prompt.family).with_context(|| {
        format!(
            "family `{}` is unknown to this client; pass --answer-cmd",
            prompt.family
        )
    })?;
    family.solve(&prompt).with_context(|| {
        format!(
            "family `{}` has no built-in solver; pass --answer-cmd",
            prompt.family
        )
    })
}

fn proof(
    node: &str,
    id: &IdentityId,
    t: u64,
    params: Option<PathBuf>,
    class: Option<Class>,
) -> anyhow::Result<()> {
    let gw = Gateway::new(node);
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
        LightVerifier::new(params.committee.clone(), params.quorum).with_params(params.digest());
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
