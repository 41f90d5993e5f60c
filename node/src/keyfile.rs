//! Key files: a node's signing key (also its libp2p identity) and identity keys.
//!
//! A key file is JSON: `{"kind": "...", "public_key": "<hex>", "secret_key": "<hex>"}`, written
//! with mode 0600 and never overwritten unless asked to.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, bail};
use ed25519_dalek::SigningKey;
use serde::{Deserialize, Serialize};

/// What a key is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyKind {
    /// A committee node's signing key.
    NodeKey,
    /// An identity's key.
    IdentityKey,
}

#[derive(Serialize, Deserialize)]
struct KeyFile {
    kind: KeyKind,
    public_key: String,
    secret_key: String,
}

/// Generates a key and writes it to `path`.
pub fn generate(path: &Path, kind: KeyKind, force: bool) -> anyhow::Result<SigningKey> {
    let key = SigningKey::generate(&mut rand::rng());
    write(path, kind, &key, force)?;
    Ok(key)
}

/// Writes `key` to `path` (mode 0600).
pub fn write(path: &Path, kind: KeyKind, key: &SigningKey, force: bool) -> anyhow::Result<()> {
    if path.exists() && !force {
        bail!(
            "{} already exists; pass --force to replace it (the old key is lost)",
            path.display()
        );
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let file = KeyFile {
        kind,
        public_key: hex::encode(key.verifying_key().to_bytes()),
        secret_key: hex::encode(key.to_bytes()),
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    serde_json::to_writer_pretty(&mut out, &file)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Reads a key of `kind` from `path`.
pub fn read(path: &Path, kind: KeyKind) -> anyhow::Result<SigningKey> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read key file {}; create one with `hco keys gen` or `hco identity new`",
            path.display()
        )
    })?;
    let file: KeyFile = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a key file", path.display()))?;
    if file.kind != kind {
        bail!(
            "{} holds a {:?}, not a {:?}",
            path.display(),
            file.kind,
            kind
        );
    }
    let mut secret = [0u8; 32];
    hex::decode_to_slice(file.secret_key.trim(), &mut secret)
        .with_context(|| format!("{}: secret_key must be 64 hex characters", path.display()))?;
    let key = SigningKey::from_bytes(&secret);
    if hex::encode(key.verifying_key().to_bytes()) != file.public_key.trim() {
        bail!(
            "{}: public_key does not match secret_key; the file is damaged",
            path.display()
        );
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_refuses_overwrite_and_wrong_kind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let key = generate(&path, KeyKind::NodeKey, false).unwrap();
        assert_eq!(
            read(&path, KeyKind::NodeKey).unwrap().to_bytes(),
            key.to_bytes()
        );
        assert!(generate(&path, KeyKind::NodeKey, false).is_err());
        assert!(read(&path, KeyKind::IdentityKey).is_err());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
    }
}
