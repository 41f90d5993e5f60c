#!/usr/bin/env python3
"""The trained attacker's solver: one challenge stage as JSON on stdin, its answer on stdout.

Input (what `hco bench attack --trained DIR` writes): {"family", "text", "data", "stage",
"earlier": [{"data", "answer", "memo"}...]}, `data` the prompt's JSON payload. Output: the
stage's answer on the first line (`KDMPR` for visual_match; `x,y` for stage 1 of
interactive_reasoning, `x,y;x,y...` for stage 2), and for interactive stage 1 a memo line
(the kind it clicked), handed back under `earlier`. The weights directory is
$HCO_TRAINED_DIR or --weights. Needs numpy and Pillow only.
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


def main():
    ap = argparse.ArgumentParser(description="answer one challenge stage (JSON on stdin)")
    ap.add_argument("--weights", default=os.environ.get("HCO_TRAINED_DIR"))
    args = ap.parse_args()
    if not args.weights:
        sys.exit("no weights: pass --weights DIR or set HCO_TRAINED_DIR")
    request = json.load(sys.stdin)
    family = request["family"]
    if family not in common.ARCH:
        sys.exit(f"no model for family `{family}`")
    data = request["data"]
    data = json.loads(data) if isinstance(data, str) else data
    params = common.load(args.weights, family)
    text, memo = answer(family, params, request.get("stage", 1), data, request.get("earlier", []))
    print(text)
    if memo:
        print(memo)


if __name__ == "__main__":
    main()
