#!/usr/bin/env bash
# The whole trained-attacker benchmark: install, render, train, measure live.
#   scripts/train-attacker/run.sh WORK_DIR [TRIES] [FAMILIES]
# WORK_DIR gets venv/, data-<family>/, weights/ and attack.json; FAMILIES is a comma-separated
# list (by default visual_match,interactive_reasoning,attention). A benchmark, not a CI test:
# it takes about 25 minutes per family on two cores (training 14 min on one thread).
set -euo pipefail
work=${1:?usage: run.sh WORK_DIR [TRIES] [FAMILIES]}
tries=${2:-300}
families=${3:-visual_match,interactive_reasoning,attention}
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
count() {
  case $1 in
    visual_match) echo "${VISUAL_COUNT:-100000}" ;;
    interactive_reasoning) echo "${INTERACTIVE_COUNT:-15000}" ;;
    attention) echo "${ATTENTION_COUNT:-4000}" ;;
  esac
}
for family in ${families//,/ }; do
  "$hco" bench attack dataset --family "$family" --count "$(count "$family")" --seed 1 \
    --out "$work/data-$family"
  "$work/venv/bin/python" "$here/train.py" --family "$family" --data "$work/data-$family" \
    --out "$work/weights" --minutes "${MINUTES:-14}"
done
"$hco" bench attack --families "$families" --tries "$tries" \
  --identity-windows 0 --trained "$work/weights" \
  --trained-cmd "$work/venv/bin/python $here/solve.py" --json | tee "$work/attack.json"
