#!/usr/bin/env bash
# The whole trained-attacker benchmark: install, render, train, measure live.
#   scripts/train-attacker/run.sh WORK_DIR [TRIES]
# WORK_DIR gets venv/, data-<family>/, weights/ and attack.json. A benchmark, not a CI test:
# it takes about an hour on two cores (training ~28 min on one thread).
set -euo pipefail
work=${1:?usage: run.sh WORK_DIR [TRIES]}
tries=${2:-300}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
mkdir -p "$work"
work=$(cd "$work" && pwd)
[ -x "$work/venv/bin/python" ] || python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q -r "$here/requirements.txt"
(cd "$repo" && cargo build --release -p hco-node)
hco="$repo/target/release/hco"
# Sizes that fit the training budget on one thread (see README.md).
"$hco" bench attack dataset --family visual_match --count "${VISUAL_COUNT:-100000}" --seed 1 \
  --out "$work/data-visual_match"
"$hco" bench attack dataset --family interactive_reasoning --count "${INTERACTIVE_COUNT:-15000}" \
  --seed 1 --out "$work/data-interactive_reasoning"
for family in visual_match interactive_reasoning; do
  "$work/venv/bin/python" "$here/train.py" --family "$family" --data "$work/data-$family" \
    --out "$work/weights" --minutes "${MINUTES:-14}"
done
"$hco" bench attack --families visual_match,interactive_reasoning --tries "$tries" \
  --identity-windows 0 --trained "$work/weights" \
  --trained-cmd "$work/venv/bin/python $here/solve.py" --json | tee "$work/attack.json"
