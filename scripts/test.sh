#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: unit, integration, property, doc tests,
# and the light-verifier build without the ledger. Installs what the tests need where missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
  echo "cargo is missing: install Rust (https://rustup.rs) first" >&2
  exit 1
fi

# The page's browser tests drive headless Chromium through chromedriver (Debian packages).
if ! command -v chromedriver >/dev/null || ! command -v chromium >/dev/null; then
  if command -v apt-get >/dev/null; then
    sudo=""
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
    echo "installing chromium and chromium-driver for the browser tests" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "chromedriver is missing and apt-get is not available: install chromium and its" \
      "chromedriver, or the browser tests (browser::devnet_browser_*) fail" >&2
  fi
fi

# The light verifier must build without sled or any I/O dependency.
cargo check --quiet -p hco-oracle --no-default-features

if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast
else
  cargo test --workspace --no-fail-fast --lib --bins --tests
fi
cargo test --workspace --doc
