#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a short time (FUZZ_SECONDS each, default 30), where
# a nightly toolchain and cargo-fuzz are installed; elsewhere it says so and exits 0, so CI may
# call it without depending on either. A crash fails the script and leaves its input under
# fuzz/artifacts/<target>/ (reproduce with `cargo +nightly fuzz run <target> <file>`).
#
#   scripts/fuzz.sh                 # every target, 30 s each
#   FUZZ_SECONDS=600 scripts/fuzz.sh gossip_acceptance config
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz: no nightly toolchain; skipping (rustup toolchain install nightly)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz is not installed; skipping (cargo install cargo-fuzz)"
    exit 0
fi

seconds="${FUZZ_SECONDS:-30}"
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
failed=()
for target in "${targets[@]}"; do
    echo "fuzz: $target for ${seconds}s"
    if ! cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=4096; then
        failed+=("$target")
    fi
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: crashes in: ${failed[*]} (inputs under fuzz/artifacts/)"
    exit 1
fi
echo "fuzz: ${#targets[@]} targets, no crash"
