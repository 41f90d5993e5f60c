#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: unit, integration, property, doc tests,
# and the light-verifier build without the ledger. Installs what the tests need where missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
  echo "cargo is missing: install Rust (https://rustup.rs) first" >&2
  exit 1
fi

# The light verifier must build without sled or any I/O dependency.
cargo check --quiet -p hco-oracle --no-default-features

if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
else
  cargo test --workspace --no-fail-fast --lib --bins --tests
fi
cargo test --workspace --doc
