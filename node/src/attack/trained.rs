//! `trained`: a model trained on labelled challenges of our own generator
//! (`hco bench attack dataset`, `scripts/train-attacker/`), played through an outside solver
//! program. `hco bench attack --trained DIR` adds it beside the in-tree attackers of
//! `visual_match` and `interactive_reasoning`.
//!
//! The solver contract: the harness runs the command (`sh -c`) once per stage, with the
//! weights directory in `HCO_TRAINED_DIR` and one thread's worth of numeric libraries
//! (`OMP_NUM_THREADS=1`…), writes one JSON object on its stdin
//! `{"family", "text", "data", "stage", "earlier": [{"data", "answer", "memo"}…]}` (`data` the
//! prompt's JSON payload, `earlier` the stages already answered) and reads the stage's answer
//! from the first line of its stdout; an optional second line is a memo handed back with that
//! stage under `earlier`. `visual_match` has one stage (the answer is the letters);
//! `interactive_reasoning` two (the stage-1 click through `POST /v1/challenges/stage`, then
//! the stage-2 clicks; the harness sends `first|second`). A solver that fails, or is still
//! running at the deadline, fails the try as `solver_failed`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};

use super::{Attack, Session, Verdict, compute};

/// The families the trained attacker plays.
pub const FAMILIES: [&str; 2] = ["visual_match", "interactive_reasoning"];

/// The trained attacker of one family.
pub struct Trained {
    family: &'static str,
    cmd: String,
    weights: PathBuf,
}

impl Trained {
    /// The attacker of `family` running `cmd` on the weights in `weights`; `None` for a family
    /// it does not play.
    pub fn of(family: &str, cmd: &str, weights: PathBuf) -> Option<Self> {
        let family = *FAMILIES.iter().find(|f| **f == family)?;
        Some(Self {
            family,
            cmd: cmd.to_owned(),
            weights,
        })
    }

    /// Runs the solver on one stage; its answer line and memo line.
    fn ask(&self, input: &Value, within: Duration) -> anyhow::Result<(String, String)> {
        let mut child = Command::new("sh")
            .args(["-c", &self.cmd])
            .env("HCO_TRAINED_DIR", &self.weights)
            .env("OMP_NUM_THREADS", "1")
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("MKL_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot run the solver `{}`", self.cmd))?;
        child
            .stdin
            .take()
            .context("solver stdin")?
            .write_all(&serde_json::to_vec(input)?)?;
        let started = Instant::now();
        loop {
            if child.try_wait()?.is_some() {
                break;
            }
            if started.elapsed() > within {
                let _ = child.kill();
                let _ = child.wait();
                anyhow::bail!("the solver did not answer in time");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let out = child.wait_with_output()?;
        anyhow::ensure!(
            out.status.success(),
            "the solver exited with {}",
            out.status
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines().map(str::trim);
        let answer = lines.next().unwrap_or_default().to_owned();
        anyhow::ensure!(!answer.is_empty(), "the solver gave no answer");
        Ok((answer, lines.next().unwrap_or_default().to_owned()))
    }

    /// One stage's answer, `None` when the solver failed.
    fn stage(
        &self,
        session: &Session<'_>,
        text: &str,
        data: &Value,
        stage: usize,
        earlier: &[Value],
    ) -> Option<(String, String)> {
        let input = json!({
            "family": self.family,
            "text": text,
            "data": data,
            "stage": stage,
            "earlier": earlier,
        });
        let within = session.remaining();
        compute(|| self.ask(&input, within))
            .map_err(|e| tracing::debug!(error = %e, "trained solver failed"))
            .ok()
    }
}

impl Attack for Trained {
    fn family(&self) -> &'static str {
        self.family
    }
    fn name(&self) -> &'static str {
        "trained"
    }
    fn play(&self, session: &mut Session<'_>) -> anyhow::Result<Verdict> {
        let (text, data) = (session.prompt().text.clone(), session.data().clone());
        let Some((first, memo)) = self.stage(session, &text, &data, 1, &[]) else {
            return Ok(Verdict::Rejected("solver_failed".into()));
        };
        if self.family == "visual_match" {
            session.wait_min_solve(Duration::from_millis(50));
            return session.respond(first.as_bytes());
        }
        let second_prompt = match session.stage(1, first.as_bytes())? {
            Ok(prompt) => prompt,
            Err(code) => return Ok(Verdict::Rejected(code)),
        };
        let earlier = [json!({"data": data, "answer": first, "memo": memo})];
        let Some((second, _)) = self.stage(
            session,
            &second_prompt.text,
            &second_prompt.data,
            2,
            &earlier,
        ) else {
            return Ok(Verdict::Rejected("solver_failed".into()));
        };
        session.wait_min_solve(Duration::from_millis(150));
        session.respond(format!("{first}|{second}").as_bytes())
    }
    // The default concurrency: the solver runs inside `compute` (one per core at a time), and
    // the tries mostly wait out the minimum solve time.
}
