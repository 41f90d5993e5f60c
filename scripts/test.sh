#!/usr/bin/env bash
# Runs every test of the workspace on a fresh machine: unit, integration, property and doc tests,
# and the JavaScript verifier's tests (js/); installs the js-libp2p observer (scripts/observer-js/)
# the node's observer test runs. The build's shape (hco-verify without std, the oracle without its
# ledger) is checked by scripts/build-checks.sh, which CI runs beside the lints.
# Installs what the tests need where missing.
#
# `scripts/test.sh --long` runs the few long tests the first command leaves out (listed in
# `long` below): statistical ones (completeness at a person's pace over twenty challenges in
# Chromium for two families and eight attention streams, attackers' first-try rates over HTTP
# and the attention frame reader's offline one, the one-person bound over a whole window, alone and with a malicious member) and
# three devnets of faults whose rules the first command checks in the oracle's own tests and
# whose code paths its other devnets run (a member stopped then catching up, a late
# certificate, a reveal to one member). Every module they exercise is also covered by a shorter test of the
# first command; CI runs both.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=main
if [ "${1:-}" = --long ]; then
  mode=long
elif [ $# -gt 0 ]; then
  echo "usage: scripts/test.sh [--long]" >&2
  exit 2
fi
long='test(=browser_interactive::devnet_browser_interactive_person_clicks_both_pictures)
  | test(=browser_visual::devnet_browser_visual_person_types_the_letters)
  | test(=browser_attention::devnet_browser_attention_person_passes_eight_streams)
  | test(=attack::attention::live_tests::attackers_over_http_rarely_pass)
  | test(=attack::attention::cv::tests::frame_cv_offline_rate_is_low)
  | test(=attack_visual::visual_attackers_fail_over_http)
  | test(=attack_one_person::one_person_attacker_is_bounded)
  | test(=attack_one_person::one_person_with_a_malicious_member_is_bounded_by_the_member_bound)
  | test(=devnet::devnet_certifies_without_a_stopped_node_which_then_catches_up)
  | test(=byzantine::late::devnet_byzantine_member_cannot_change_a_certified_window)
  | test(=byzantine::reveal::devnet_byzantine_reveal_to_one_member_counts_at_every_member)'

if ! command -v cargo >/dev/null; then
  echo "cargo is missing: install Rust (https://rustup.rs) first" >&2
  exit 1
fi

# What the tests need from Debian, installed where missing: headless Chromium and its driver
# for the page's browser tests, Tesseract for the in-tree OCR attackers, make for building the
# node's allocator (jemalloc, from C).
missing=()
command -v make >/dev/null || missing+=(make)
command -v chromium >/dev/null || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null; then
    sudo=""
    if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then sudo="sudo"; fi
    echo "installing ${missing[*]} for the build, the browser tests and the OCR attackers" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "missing ${missing[*]} and apt-get is not available: install them, or the build" \
      "(make), the browser tests (browser::devnet_browser_*) or the attacker tests fail" >&2
  fi
fi

# The node's faulty-member tests need its test-only `unsafe-byzantine` feature (a default build
# has no such code); this turns it on for the node's tests only.
features=(--features hco-node/unsafe-byzantine)
if [ "$mode" = long ]; then
  if cargo nextest --version >/dev/null 2>&1; then
    cargo nextest run --workspace "${features[@]}" --no-fail-fast -E "$long"
  else
    echo "without cargo-nextest the first command runs every test with cargo test, these included" >&2
  fi
  exit 0
fi

# The JavaScript verifier (js/, a few seconds) against the certificates and proofs the Rust code
# makes (js/test/fixtures/, kept equal to the code by the oracle's js_fixtures test). It needs
# Node.js 20.19 or newer (the floor of @noble/curves and @noble/hashes 2). Where node or npm is
# missing or older, these tests are skipped with a warning rather than installed from Debian:
# Debian's nodejs (18) is below that floor.
node_ok=""
if command -v node >/dev/null && command -v npm >/dev/null; then
  node_ok=$(node -e 'const [a, b] = process.versions.node.split(".").map(Number);
    process.stdout.write(a > 20 || (a === 20 && b >= 19) ? "yes" : "")')
fi
if [ -n "$node_ok" ]; then
  (
    cd js
    [ -d node_modules ] || npm ci --ignore-scripts --no-audit --no-fund
    npm test
  )
  # The DAO example (a Snapshot-shaped strategy on the verifier) against a stand-in node; the
  # node's links devnet test runs it against real nodes.
  (cd examples/snapshot-strategy && node --test test/)
  # The js-libp2p observer (scripts/observer-js/) that the node's observer_js test runs against a
  # node; without its packages that test skips itself with a warning.
  (
    cd scripts/observer-js
    [ -d node_modules ] || npm ci --ignore-scripts --no-audit --no-fund || {
      rm -rf node_modules
      echo "!!!! npm ci in scripts/observer-js failed: the js-libp2p observer test" \
        "(observer_js::*) will be skipped !!!!" >&2
    }
  )
else
  echo "!!!! SKIPPED: the JavaScript verifier's tests (js/) and the js-libp2p observer test" \
    "(observer_js::*) need Node.js >= 20.19 with npm;" \
    "found: $(command -v node >/dev/null && node --version || echo 'no node')," \
    "$(command -v npm >/dev/null && echo npm || echo 'no npm'). Install Node.js 20.19+ to run them. !!!!" >&2
fi

if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace "${features[@]}" --no-fail-fast -E "not ($long)"
else
  cargo test --workspace "${features[@]}" --no-fail-fast --lib --bins --tests
fi
cargo test --workspace --doc
