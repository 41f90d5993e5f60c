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
//!
//! `attention` is a live stream, so its solver is one process per challenge, fed as the
//! frames arrive: the harness starts it when the challenge is issued and writes the same
//! request object as the first line of its stdin (`"stage": 1`, no `earlier`); the solver
//! loads its model and prints `ready` (within 10 s, else the try is `solver_failed`). The
//! harness then opens the stream and plays it as the in-tree attention attackers do
//! ([`super::attention`]): for each
//! event's frame (the odd frames of the stream; the even ones take the letters away) it writes
//! one line `{"i", "png"}` (the frame's index and its PNG, base64, as the stream sent them)
//! and reads one line back, `I X,Y` to click at `(X, Y)` or `I -` for no click (`I` the
//! frame's index). A click is posted 480–900 ms after the frame arrived (or as soon as the
//! reply comes, if later); a reply that has not come within 1.5 s of the frame is no click.
//! The harness closes the solver's stdin when the stream ends and answers with the sealed
//! log. A try the node refuses after the solver failed (exited, gave a malformed line) is
//! counted as `solver_failed`.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};

use super::{Attack, Session, Verdict, compute};

/// The families the trained attacker plays.
pub const FAMILIES: [&str; 3] = ["visual_match", "interactive_reasoning", "attention"];

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

    /// The solver command, ready to spawn.
    fn command(&self) -> Command {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &self.cmd])
            .env("HCO_TRAINED_DIR", &self.weights)
            .env("OMP_NUM_THREADS", "1")
            .env("OPENBLAS_NUM_THREADS", "1")
            .env("MKL_NUM_THREADS", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        cmd
    }

    /// Runs the solver on one stage; its answer line and memo line.
    fn ask(&self, input: &Value, within: Duration) -> anyhow::Result<(String, String)> {
        let mut child = self
            .command()
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
        if self.family == hco_challenges::attention::NAME {
            return self.play_stream(session, &text, &data);
        }
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
    /// The solver runs inside `compute` (one per core at a time), and the tries mostly wait:
    /// out the minimum solve time, or the 14 s stream of `attention` (as many at once as its
    /// in-tree attackers play).
    fn concurrency(&self) -> usize {
        if self.family == hco_challenges::attention::NAME {
            32
        } else {
            16
        }
    }
}

impl Trained {
    /// `attention`: one solver process for the whole stream, fed each event's frame.
    fn play_stream(
        &self,
        session: &mut Session<'_>,
        text: &str,
        data: &Value,
    ) -> anyhow::Result<Verdict> {
        let request = json!({
            "family": self.family,
            "text": text,
            "data": data,
            "stage": 1,
            "earlier": [],
        });
        let solver = match StreamSolver::start(self.command(), &request) {
            Ok(solver) => solver,
            Err(e) => {
                tracing::debug!(error = %e, "trained attention solver failed to start");
                return Ok(Verdict::Rejected("solver_failed".into()));
            }
        };
        let verdict = super::attention::play(session, &solver)?;
        let failed = solver.failed.load(Ordering::Relaxed);
        solver.stop();
        Ok(match verdict {
            Verdict::Rejected(_) if failed => Verdict::Rejected("solver_failed".into()),
            v => v,
        })
    }
}

/// How long the harness waits for the solver's reply to a frame.
const FRAME_REPLY: Duration = Duration::from_millis(1500);
/// How long the harness waits for the solver to load its model (the stream is opened after).
const READY: Duration = Duration::from_secs(10);

/// A solver process playing one `attention` stream.
struct StreamSolver {
    child: Mutex<Child>,
    /// Its stdin (`None` once closed) and the lines of its stdout, used one frame at a time.
    io: Mutex<(Option<ChildStdin>, Receiver<String>)>,
    /// Set when the solver gave no well-formed reply to a frame.
    failed: AtomicBool,
}

impl StreamSolver {
    /// Starts the solver, writes the request line and waits for its `ready`.
    fn start(mut cmd: Command, request: &Value) -> anyhow::Result<Self> {
        let mut child = cmd.spawn().context("cannot run the solver")?;
        let mut stdin = child.stdin.take().context("solver stdin")?;
        let stdout = child.stdout.take().context("solver stdout")?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut line = serde_json::to_vec(request)?;
        line.push(b'\n');
        let written = stdin.write_all(&line).and_then(|()| stdin.flush());
        let solver = Self {
            child: Mutex::new(child),
            io: Mutex::new((Some(stdin), rx)),
            failed: AtomicBool::new(false),
        };
        let ready = written.map_err(anyhow::Error::from).and_then(|()| {
            let io = solver.io.lock().unwrap_or_else(|e| e.into_inner());
            let (_, lines) = &*io;
            let line = lines
                .recv_timeout(READY)
                .context("the solver is not ready")?;
            anyhow::ensure!(
                line.trim() == "ready",
                "the solver said `{line}`, not `ready`"
            );
            Ok(())
        });
        if let Err(e) = ready {
            solver.stop();
            return Err(e);
        }
        Ok(solver)
    }

    /// Sends frame `index` and waits for its reply: the click, if any.
    fn ask(&self, index: usize, png: &Value) -> anyhow::Result<Option<(u32, u32)>> {
        let mut io = self.io.lock().unwrap_or_else(|e| e.into_inner());
        let (stdin, lines) = &mut *io;
        let stdin = stdin.as_mut().context("the solver's stdin is closed")?;
        let mut line = serde_json::to_vec(&json!({"i": index, "png": png}))?;
        line.push(b'\n');
        stdin.write_all(&line)?;
        stdin.flush()?;
        let due = Instant::now() + FRAME_REPLY;
        loop {
            let left = due.saturating_duration_since(Instant::now());
            let reply = match lines.recv_timeout(left) {
                Ok(reply) => reply,
                Err(RecvTimeoutError::Timeout) => anyhow::bail!("no reply to frame {index}"),
                Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the solver exited"),
            };
            let (i, click) = reply
                .trim()
                .split_once(' ')
                .with_context(|| format!("malformed reply `{reply}`"))?;
            // A late reply to an earlier frame is skipped.
            if i.parse::<usize>().ok() != Some(index) {
                continue;
            }
            if click.trim() == "-" {
                return Ok(None);
            }
            let (x, y) = click
                .trim()
                .split_once(',')
                .with_context(|| format!("malformed click `{click}`"))?;
            return Ok(Some((x.trim().parse()?, y.trim().parse()?)));
        }
    }

    /// Closes the solver's stdin (the end of the stream), gives it a moment to exit, then
    /// kills it.
    fn stop(&self) {
        self.io.lock().unwrap_or_else(|e| e.into_inner()).0.take();
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
        let until = Instant::now() + Duration::from_millis(500);
        while Instant::now() < until {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl super::attention::Reader for StreamSolver {
    fn read(&self, _: u8, index: usize, frame: &Value, _: &[u8]) -> Option<(u32, u32)> {
        self.ask(index, &frame["png"])
            .map_err(|e| {
                tracing::debug!(error = %e, "trained attention solver failed");
                self.failed.store(true, Ordering::Relaxed);
            })
            .ok()
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solver(script: &str) -> anyhow::Result<StreamSolver> {
        let t = Trained::of("attention", script, PathBuf::from("/nonexistent")).unwrap();
        StreamSolver::start(t.command(), &json!({"family": "attention"}))
    }

    /// The stream contract with a shell solver: `ready`, then one reply per frame, matched by
    /// index (a stale reply is skipped); a malformed reply, a missing `ready` or a solver that
    /// has exited are errors.
    #[test]
    fn stream_solver_keeps_the_line_contract() {
        let s = solver(
            "read req; echo ready; read a; echo '1 10,20'; read b; echo '3 -'; \
             read c; echo '1 7,7'; echo '5 x'",
        )
        .unwrap();
        let png = json!("AAAA");
        assert_eq!(s.ask(1, &png).unwrap(), Some((10, 20)));
        assert_eq!(s.ask(3, &png).unwrap(), None);
        assert!(s.ask(5, &png).is_err());
        assert!(s.ask(7, &png).is_err());
        s.stop();
        assert!(solver("read req; echo hello").is_err());
        assert!(solver("exit 0").is_err());
    }
}
