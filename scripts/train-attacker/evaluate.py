"""Offline scoring of trained weights on held-out labelled challenges, answered exactly as
solve.py answers and judged by the family's rule (all five letters; the interactive hit rule:
within 90 % of the radius plus 3 px, each target by its own click, no extra click)."""

import os

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


def evaluate(family, params, data_dir, labels):
    """{"challenges", "solved", "rate", …} on `labels` (written by the dataset command)."""
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
