#!/usr/bin/env bash
# An operator's first hour, scripted: a local committee of four nodes, an agent identity that
# registers and answers this window's challenge, the window's certificate, an offline proof.
# Usage: HCO=path/to/hco examples/operator.sh [DIR]
set -euo pipefail
HCO=${HCO:-hco}
DIR=${1:-$(mktemp -d)}
trap '"$HCO" devnet down --dir "$DIR" >/dev/null 2>&1 || true' EXIT

# 1. Start four nodes on 127.0.0.1 (8-second windows) and take the first one's URL.
NODE=$("$HCO" devnet up --nodes 4 --dir "$DIR" --window 8s | sed -n 1p)
echo "committee up; gateway $NODE"

# 2. An agent identity registers and answers its challenge of the current window.
"$HCO" identity new --out "$DIR/agent.key" >/dev/null
"$HCO" client register --node "$NODE" --key "$DIR/agent.key" --class agent
VERDICT=$("$HCO" client solve --node "$NODE" --key "$DIR/agent.key")
echo "$VERDICT"
WINDOW=$(echo "$VERDICT" | sed -E 's/.*"window":([0-9]+).*/\1/')
ID=$("$HCO" identity show --key "$DIR/agent.key")

# 3. After the window closes, the committee certifies it; check the proof offline.
for _ in $(seq 1 60); do
  if "$HCO" client proof --node "$NODE" --id "$ID" --window "$WINDOW" 2>/dev/null; then
    exit 0
  fi
  sleep 1
done
echo "no certificate for window $WINDOW after 60 s" >&2
exit 1
