"""Offline scoring of trained weights on held-out labelled challenges, answered exactly as
solve.py answers and judged by the family's rule (all five letters; the interactive hit rule:
within 90 % of the radius plus 3 px, each target by its own click, no extra click; attention:
every event right, the cue's cell clicked where it is shown and nothing clicked where it is
not — timing aside, which the harness keeps within the rules)."""

import os

import numpy as np

import common
from solve import answer


def hits(target, click):
    reach = target["r"] * 9 // 10 + 3
    return (click[0] - target["x"]) ** 2 + (click[1] - target["y"]) ** 2 <= reach * reach


def all_hit(targets, clicks):
    """Each target hit by its own click (a matching), as the family verifies."""
    if len(targets) != len(clicks):
        return False

    def assign(i, used):
        if i == len(targets):
            return True
        for j, c in enumerate(clicks):
            if j not in used and hits(targets[i], c) and assign(i + 1, used | {j}):
                return True
        return False

    return assign(0, frozenset())


def clicks(text):
    return [tuple(int(v) for v in c.split(",")) for c in text.split(";")]


def attention_reads(params, data_dir, labels):
    """Per challenge, per event: (the cue probability of each cell, the cue's cell or None)."""
    out = []
    for label in labels:
        reads = []
        for e in label["events"]:
            png = open(os.path.join(data_dir, e["image"]), "rb").read()
            probs = common.cue_probs(params, png, label["cue"])
            t = e["target"]
            reads.append((probs, None if t is None else e["glyphs"][t]["cell"]))
        out.append(reads)
    return out


def attention_score(reads, threshold):
    """{"challenges", "solved", "rate", "event_rate", "cue_event_rate", "no_cue_event_rate"}
    of `attention_reads` at `threshold`."""
    solved = 0
    right = {True: [0, 0], False: [0, 0]}
    for events in reads:
        ok = [common.pick_cell(p, threshold) == cell for p, cell in events]
        solved += all(ok)
        for (_, cell), r in zip(events, ok):
            right[cell is not None][0] += r
            right[cell is not None][1] += 1
    n = max(len(reads), 1)
    rate = lambda k: round(right[k][0] / max(right[k][1], 1), 4)  # noqa: E731
    events = right[True][1] + right[False][1]
    return {
        "challenges": len(reads),
        "solved": solved,
        "rate": round(solved / n, 4),
        "threshold": threshold,
        "event_rate": round((right[True][0] + right[False][0]) / max(events, 1), 4),
        "cue_event_rate": rate(True),
        "no_cue_event_rate": rate(False),
    }


def pick_threshold(reads):
    """The threshold that solves most of `reads` (the nearest to 0.5 among equals)."""
    grid = [round(t, 2) for t in np.arange(0.05, 0.96, 0.05)]
    return max(grid, key=lambda t: (attention_score(reads, t)["solved"], -abs(t - 0.5)))


def evaluate(family, params, data_dir, labels, threshold=0.5):
    """{"challenges", "solved", "rate", …} on `labels` (written by the dataset command)."""
    if family == "attention":
        return attention_score(attention_reads(params, data_dir, labels), threshold)
    png = lambda name: open(os.path.join(data_dir, name), "rb").read()  # noqa: E731
    solved = first = letters = 0
    for label in labels:
        if family == "visual_match":
            data = {"images": [common.base64.b64encode(png(label["images"][0])).decode()]}
            got, _ = answer(family, params, 1, data)
            solved += got == label["answer"]
            letters += sum(a == b for a, b in zip(got, label["answer"]))
            continue
        stages = label["stages"]
        one = {"image": common.base64.b64encode(png(label["images"][0])).decode()}
        a1, memo = answer(family, params, 1, one)
        target1 = [stages[0]["shapes"][i] for i in stages[0]["targets"]]
        if not all_hit(target1, clicks(a1)):
            continue
        first += 1
        two = {"image": common.base64.b64encode(png(label["images"][1])).decode()}
        a2, _ = answer(family, params, 2, two, [{"data": one, "answer": a1, "memo": memo}])
        target2 = [stages[1]["shapes"][i] for i in stages[1]["targets"]]
        solved += all_hit(target2, clicks(a2))
    n = max(len(labels), 1)
    out = {"challenges": len(labels), "solved": solved, "rate": round(solved / n, 4)}
    if family == "visual_match":
        out["letter_rate"] = round(letters / (5 * n), 4)
    else:
        out["stage1_rate"] = round(first / n, 4)
    return out
