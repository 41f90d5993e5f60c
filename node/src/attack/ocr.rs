//! Tesseract, the off-the-shelf OCR engine (Debian `tesseract-ocr`), run as a process on a PNG.
//! Attackers use it as any script would: several page-segmentation modes, an optional character
//! whitelist, and the text it prints.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// Whether the `tesseract` binary is on the PATH.
pub fn available() -> bool {
    Command::new("tesseract")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Tesseract's options for one run.
#[derive(Debug, Clone, Copy)]
pub struct Ocr<'a> {
    /// Page segmentation mode: 7 = one text line, 8 = one word, 10 = one character, 6 = a block.
    pub psm: u8,
    /// Only these characters may be recognised (empty: any).
    pub whitelist: &'a str,
}

impl Ocr<'_> {
    /// One word in capitals.
    pub const WORD: Ocr<'static> = Ocr {
        psm: 8,
        whitelist: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    };

    /// The text Tesseract reads in `png`, trimmed.
    pub fn read(&self, png: &[u8]) -> anyhow::Result<String> {
        let mut cmd = Command::new("tesseract");
        cmd.args(["stdin", "stdout", "--psm", &self.psm.to_string()]);
        if !self.whitelist.is_empty() {
            cmd.args(["-c", &format!("tessedit_char_whitelist={}", self.whitelist)]);
        }
        let mut child = cmd
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run tesseract (Debian: apt-get install tesseract-ocr)")?;
        child
            .stdin
            .take()
            .context("tesseract stdin")?
            .write_all(png)?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            bail!("tesseract exited with {}", out.status);
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }
}
