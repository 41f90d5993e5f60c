#!/usr/bin/env python3
"""The trained attacker's solver: one challenge stage as JSON on stdin, its answer on stdout.

Input (what `hco bench attack --trained DIR` writes): {"family", "text", "data", "stage",
"earlier": [{"data", "answer", "memo"}...]}, `data` the prompt's JSON payload. Output: the
stage's answer on the first line (`KDMPR` for visual_match; `x,y` for stage 1 of
interactive_reasoning, `x,y;x,y...` for stage 2), and for interactive stage 1 a memo line
(the kind it clicked), handed back under `earlier`. The weights directory is
$HCO_TRAINED_DIR or --weights. Needs numpy and Pillow only.

`attention` is a stream: the request is the first line of stdin; the solver loads its model
and prints `ready`; then each event's frame arrives as a line {"i", "png"} (base64) while the
stream plays, and the solver replies to each with one line, `I X,Y` (click there) or `I -` (no
click), flushed at once. It ends when stdin closes.
"""

import argparse
import json
import os
import sys

import numpy as np

import common


def answer(family, params, stage, data, earlier=()):
    """The answer to one stage, and the memo for the next."""
    arch = common.ARCH[family]
    png = common.prompt_png(family, data)
    if family == "visual_match":
        x = common.visual_input(png)[None]
        return common.read_letters(common.forward_np(arch, params, x)[0]), ""
    x = common.to_float(common.interactive_input(png))[None]
    found = common.detect(common.forward_np(arch, params, x)[0])
    if stage == 1:
        (cx, cy), kind = common.first_click(found)
        return f"{cx},{cy}", kind
    kind = earlier[0].get("memo") if earlier else None
    kind = kind if kind in common.KINDS else "circle"
    return ";".join(f"{x},{y}" for x, y in common.second_clicks(found, kind)), ""


def stream_attention(weights, data):
    """Replies to each frame line on stdin until it closes."""
    params = common.load(weights, "attention")
    threshold = common.load_threshold(weights)
    cue = data["cue"]
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        if not line.strip():
            continue
        frame = json.loads(line)
        probs = common.cue_probs(params, common.base64.b64decode(frame["png"]), cue)
        cell = common.pick_cell(probs, threshold)
        if cell is None:
            reply = "-"
        else:
            x, y = common.cell_centre(cell)
            reply = f"{x},{y}"
        sys.stdout.write(f"{frame['i']} {reply}\n")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description="answer one challenge stage (JSON on stdin)")
    ap.add_argument("--weights", default=os.environ.get("HCO_TRAINED_DIR"))
    args = ap.parse_args()
    if not args.weights:
        sys.exit("no weights: pass --weights DIR or set HCO_TRAINED_DIR")
    # The request is the first line (the one-stage families send nothing else).
    request = json.loads(sys.stdin.readline())
    family = request["family"]
    if family not in common.ARCH:
        sys.exit(f"no model for family `{family}`")
    data = request["data"]
    data = json.loads(data) if isinstance(data, str) else data
    if family == "attention":
        stream_attention(args.weights, data)
        return
    params = common.load(args.weights, family)
    text, memo = answer(family, params, request.get("stage", 1), data, request.get("earlier", []))
    print(text)
    if memo:
        print(memo)


if __name__ == "__main__":
    main()
