#!/usr/bin/env python3
"""Trains the attacker of one family on a set written by `hco bench attack dataset`.

    python train.py --family visual_match --data DATA_DIR --out WEIGHTS_DIR --minutes 14

Runs on one CPU thread (it sets OMP_NUM_THREADS=1 and XLA's single-thread flags before JAX
loads) for at most `--minutes` of training, then writes WEIGHTS_DIR/<family>.npz (the
parameters, read by solve.py with numpy alone) and WEIGHTS_DIR/<family>.json (what was
trained and its accuracy on the held-out challenges, scored the way solve.py answers).
For `attention` the held-out challenges are split in two: the first half picks the decision
threshold (how likely the likeliest cell must be to hold the cue before it is clicked), saved
in attention.json for solve.py; the second half is scored with it.
"""

import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import common  # noqa: E402
import evaluate as evaluate_mod  # noqa: E402
from evaluate import evaluate  # noqa: E402


def cell_targets(shapes, h=33, w=45):
    """Per output cell: the kind whose shape's centre is within 0.4 r of the cell's centre
    (the nearest such), else background (6)."""
    t = np.full((h, w), len(common.KINDS), np.int8)
    best = np.full((h, w), np.inf)
    ys, xs = np.mgrid[0:h, 0:w]
    cy, cx = (ys + 0.5) * common.CELL, (xs + 0.5) * common.CELL
    for s in shapes:
        d = np.hypot(cx - s["x"], cy - s["y"])
        near = (d <= max(0.4 * s["r"], 6.0)) & (d < best)
        t[near] = common.KINDS.index(s["kind"])
        best[near] = d[near]
    return t


def attention_targets(event):
    """Per grid cell of an event's frame: its letter's index, or NO_LETTER."""
    t = [common.NO_LETTER] * (common.A_GRID * common.A_GRID)
    for g in event["glyphs"]:
        t[g["cell"]] = common.CAPITALS.index(g["letter"])
    return t


def load(family, data_dir):
    """Inputs and targets of every labelled challenge, the labels themselves, and how many
    inputs each challenge gave."""
    labels = [json.loads(line) for line in open(os.path.join(data_dir, "labels.jsonl"))]
    xs, ys, per = [], [], []
    if family == "attention":
        for label in labels:
            for e in label["events"]:
                png = open(os.path.join(data_dir, e["image"]), "rb").read()
                xs.append(common.attention_cells(png))
                ys.append(attention_targets(e))
            per.append(len(label["events"]) * common.A_GRID * common.A_GRID)
        x = np.concatenate(xs)
        y = np.asarray(ys, np.int32).reshape(-1)
        return x, y, labels, per
    for label in labels:
        per.append(len(label["images"]))
        for i, name in enumerate(label["images"]):
            png = open(os.path.join(data_dir, name), "rb").read()
            if family == "visual_match":
                xs.append(common.visual_input(png))
                ys.append([common.ALPHABET.index(c) for c in label["answer"]])
            else:
                xs.append(common.interactive_input(png))
                ys.append(cell_targets(label["stages"][i]["shapes"]))
    return np.stack(xs), np.stack(ys).astype(np.int32), labels, per


def init(arch, key):
    params = {}
    p = 0
    for layer in arch:
        if layer[0] not in ("conv", "dense"):
            continue
        key, sub = jax.random.split(key)
        if layer[0] == "conv":
            _, cin, cout, k = layer[:4]
            shape, fan_in = (k, k, cin, cout), k * k * cin
        else:
            _, cin, cout = layer[:3]
            shape, fan_in = (cin, cout), cin
        params[f"w{p}"] = jax.random.normal(sub, shape) * np.sqrt(2.0 / fan_in)
        params[f"b{p}"] = jnp.zeros((cout,))
        p += 1
    return params


def forward(arch, params, x):
    """The model in JAX; must compute what common.forward_np computes."""
    p = 0
    for layer in arch:
        if layer[0] == "conv":
            pad = layer[4] * (layer[3] // 2)
            x = jax.lax.conv_general_dilated(
                x, params[f"w{p}"], (1, 1), [(pad, pad), (pad, pad)],
                rhs_dilation=(layer[4], layer[4]),
                dimension_numbers=("NHWC", "HWIO", "NHWC"),
            ) + params[f"b{p}"]
            x = jax.nn.relu(x) if layer[5] else x
            p += 1
        elif layer[0] == "pool":
            n, h, w, c = x.shape
            x = x[:, : h // 2 * 2, : w // 2 * 2]
            x = x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))
        elif layer[0] == "flat":
            x = x.reshape(x.shape[0], -1)
        else:
            x = x @ params[f"w{p}"] + params[f"b{p}"]
            x = jax.nn.relu(x) if layer[3] else x
            p += 1
    return x


def make_step(family, arch, lr_max):
    def loss(params, x, y):
        out = forward(arch, params, x)
        if family == "visual_match":
            z = jax.nn.log_softmax(out.reshape(-1, common.LENGTH, len(common.ALPHABET)))
            return -jnp.take_along_axis(z, y[..., None], -1).sum(-1).mean()
        if family == "attention":
            z = jax.nn.log_softmax(out)
            return -jnp.take_along_axis(z, y[:, None], -1).mean()
        z = jax.nn.log_softmax(out)
        nll = -jnp.take_along_axis(z, y[..., None], -1)[..., 0]
        # Background cells are most of the picture: they weigh a fifth of a shape's cell.
        weight = jnp.where(y == len(common.KINDS), 0.2, 1.0)
        return (nll * weight).sum() / weight.sum()

    @jax.jit
    def step(params, m, v, t, frac, x, y):
        value, grad = jax.value_and_grad(loss)(params, x, y)
        lr = lr_max * (1.0 - 0.9 * frac)
        m = jax.tree.map(lambda a, g: 0.9 * a + 0.1 * g, m, grad)
        v = jax.tree.map(lambda a, g: 0.999 * a + 0.001 * g * g, v, grad)
        params = jax.tree.map(
            lambda p, a, b: p - lr * (a / (1 - 0.9**t)) / (jnp.sqrt(b / (1 - 0.999**t)) + 1e-8),
            params, m, v,
        )
        return params, m, v, value

    return step


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--family", required=True, choices=sorted(common.ARCH))
    ap.add_argument("--data", required=True, help="a directory from `hco bench attack dataset`")
    ap.add_argument("--out", required=True, help="the weights directory (created)")
    ap.add_argument("--minutes", type=float, default=14.0, help="training time, at most")
    ap.add_argument("--holdout", type=int, default=300, help="challenges kept out of training")
    ap.add_argument("--batch", type=int, default=None,
                    help="batch size (32; 64 cells for attention)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    family, arch = args.family, common.ARCH[args.family]
    t0 = time.time()
    batch = args.batch or (64 if family == "attention" else 32)
    x, y, labels, per = load(family, args.data)
    held = sum(per[: args.holdout])
    x_train, y_train = x[held:], y[held:]
    loaded_s = time.time() - t0
    print(f"{family}: {len(labels)} challenges loaded in {loaded_s:.0f} s", file=sys.stderr)

    params = init(arch, jax.random.PRNGKey(args.seed))
    m = jax.tree.map(jnp.zeros_like, params)
    v = jax.tree.map(jnp.zeros_like, params)
    step = make_step(family, arch, args.lr)
    rng = np.random.default_rng(args.seed)
    budget = args.minutes * 60
    start, t, seen, running = time.time(), 0, 0, None
    while time.time() - start < budget:
        order = rng.permutation(len(x_train))
        for i in range(0, len(order) - batch + 1, batch):
            elapsed = time.time() - start
            if elapsed >= budget:
                break
            idx = order[i : i + batch]
            xb = x_train[idx]
            xb = xb if family == "visual_match" else common.to_float(xb)
            t += 1
            params, m, v, value = step(params, m, v, t, elapsed / budget, xb, y_train[idx])
            seen += len(idx)
            running = float(value) if running is None else 0.98 * running + 0.02 * float(value)
            if t % 200 == 0:
                print(f"  step {t} seen {seen} loss {running:.3f} {elapsed:.0f} s", file=sys.stderr)
    train_s = time.time() - start

    os.makedirs(args.out, exist_ok=True)
    saved = {k: np.asarray(p, np.float32) for k, p in params.items()}
    np.savez(os.path.join(args.out, f"{family}.npz"), **saved)
    # The solver's numpy forward must give what was trained.
    probe = x[:2] if family == "visual_match" else common.to_float(x[:2])
    diff = float(np.abs(np.asarray(forward(arch, params, probe))
                        - common.forward_np(arch, saved, probe)).max())
    assert diff < 1e-2, f"numpy and JAX forwards disagree by {diff}"
    holdout = labels[: args.holdout]
    extra = {}
    if family == "attention":
        # The threshold from one half of the held-out challenges, the score from the other.
        half = len(holdout) // 2
        reads = evaluate_mod.attention_reads(saved, args.data, holdout)
        threshold = evaluate_mod.pick_threshold(reads[:half])
        extra = {
            "threshold": threshold,
            "threshold_pick": evaluate_mod.attention_score(reads[:half], threshold),
            "holdout_offline": evaluate_mod.attention_score(reads[half:], threshold),
            "holdout_offline_at_0.5": evaluate_mod.attention_score(reads[half:], 0.5),
        }
    else:
        extra = {"holdout_offline": evaluate(family, saved, args.data, holdout)}
    report = {
        "family": family,
        "challenges": len(labels),
        "holdout": args.holdout,
        "images_trained_on": len(x_train),
        "steps": t,
        "images_seen": seen,
        "epochs": round(seen / max(len(x_train), 1), 2),
        "train_seconds": round(train_s, 1),
        "load_seconds": round(loaded_s, 1),
        "final_loss": running,
        "numpy_jax_max_diff": diff,
        "threads": 1,
        "batch": batch,
        **extra,
    }
    with open(os.path.join(args.out, f"{family}.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
