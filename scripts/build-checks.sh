#!/usr/bin/env bash
# The build's shape, checked by CI beside formatting and lints (not tests, so not in
# scripts/test.sh): the light verifier builds without std and stays light, and the oracle builds
# without its ledger. About a minute and a half on a cold target: every dependency compiles again
# in check mode for these feature sets.
set -euo pipefail
cd "$(dirname "$0")/.."

# The light verifier (hco-verify) must build without std: checked on a bare-metal target, which
# has no std for a dependency to pull in, with and without its serde feature, and for
# wasm32-unknown-unknown, where contracts and runtimes run it. rustup adds the targets where
# missing; without rustup or a network, only the host build runs (it does not prove no_std).
for target in thumbv7em-none-eabihf wasm32-unknown-unknown; do
  if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$target"; then
    rustup target add "$target" >/dev/null 2>&1 || true
  fi
done
if command -v rustup >/dev/null && rustup target list --installed | grep -qx thumbv7em-none-eabihf; then
  cargo check --quiet -p hco-verify --no-default-features --target thumbv7em-none-eabihf
  cargo check --quiet -p hco-verify --target thumbv7em-none-eabihf
else
  echo "!!!! the no_std check of hco-verify needs the thumbv7em-none-eabihf target" \
    "(rustup target add thumbv7em-none-eabihf): checking the host build only !!!!" >&2
  cargo check --quiet -p hco-verify --no-default-features
fi
if command -v rustup >/dev/null && rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  cargo check --quiet -p hco-verify --no-default-features --target wasm32-unknown-unknown
fi
# The light verifier stays light: at most 30 lines in the count integrators are told to run.
verifier_crates=$(cargo tree --quiet -p hco-verify --no-default-features -e normal --prefix none | sort -u | wc -l)
if [ "$verifier_crates" -gt 30 ]; then
  echo "hco-verify without default features pulls $verifier_crates crates (at most 30)" >&2
  cargo tree -p hco-verify --no-default-features -e normal >&2
  exit 1
fi
# The oracle without its ledger (what examples/verify_membership links: the verifier with the
# network parameters) must still build without sled or any I/O dependency.
cargo check --quiet -p hco-oracle --no-default-features

