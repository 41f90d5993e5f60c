"""What training and solving share: image preprocessing, the three models' layer lists, a
numpy forward pass (the solver's; training uses JAX and checks it agrees), and decoding a
model's output into an answer.

Every picture is halved (2x2 mean) before the model sees them; an attention frame is then cut
into its nine grid cells, one model input each.
"""

import base64
import io
import json
import os

import numpy as np
from PIL import Image

ALPHABET = "ACDEFHJKLMNPRSTUWXYZ"
LENGTH = 5
KINDS = ["circle", "triangle", "square", "star", "cross", "heart"]
# Cells of the interactive model's output grid are 8x8 picture pixels.
CELL = 8
# attention: 360x360 frames, a 3x3 grid of 120-pixel cells; each cell (halved to 60x60) is
# classified as one of the 26 capitals or none (class 26).
CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
NO_LETTER = len(CAPITALS)
A_GRID, A_CELL = 3, 120
A_SIDE = A_CELL // 2

# Layers: ("conv", c_in, c_out, k, dilation, relu) with 'same' padding, ("pool",) a 2x2 max
# pool, ("flat",), ("dense", n_in, n_out, relu).
ARCH = {
    # (45, 120) grey -> (5, 15, 64) -> five letters of twenty.
    "visual_match": [
        ("conv", 1, 24, 3, 1, True), ("pool",),
        ("conv", 24, 48, 3, 1, True), ("pool",),
        ("conv", 48, 64, 3, 1, True), ("pool",),
        ("conv", 64, 64, 3, 1, True),
        ("flat",),
        ("dense", 5 * 15 * 64, 256, True),
        ("dense", 256, LENGTH * len(ALPHABET), False),
    ],
    # (135, 180) colour -> (33, 45) cells of 8x8 picture pixels: six kinds and background.
    "interactive_reasoning": [
        ("conv", 3, 12, 3, 1, True), ("pool",),
        ("conv", 12, 24, 3, 1, True), ("pool",),
        ("conv", 24, 48, 3, 1, True),
        ("conv", 48, 64, 3, 2, True),
        ("conv", 64, len(KINDS) + 1, 1, 1, False),
    ],
    # (60, 60) grey cell -> (7, 7, 64) -> one of 26 letters or none.
    "attention": [
        ("conv", 1, 16, 3, 1, True), ("pool",),
        ("conv", 16, 32, 3, 1, True), ("pool",),
        ("conv", 32, 64, 3, 1, True), ("pool",),
        ("conv", 64, 64, 3, 1, True),
        ("flat",),
        ("dense", 7 * 7 * 64, 128, True),
        ("dense", 128, NO_LETTER + 1, False),
    ],
}


def halve(a):
    """2x2 mean of an (H, W[, C]) array, odd edges dropped."""
    h, w = a.shape[0] // 2 * 2, a.shape[1] // 2 * 2
    a = a[:h, :w].astype(np.float32)
    return (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) / 4


def visual_input(png: bytes):
    """(45, 120, 1) float32: grey, halved, each picture scaled to zero mean, unit spread."""
    g = halve(np.asarray(Image.open(io.BytesIO(png)).convert("L")))
    g = (g - g.mean()) / (g.std() + 1e-3)
    return g[:, :, None].astype(np.float32)


def interactive_input(png: bytes):
    """(135, 180, 3) uint8: colour, halved (scaled to floats by `to_float`)."""
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    return np.round(halve(rgb)).astype(np.uint8)


def attention_cells(png: bytes):
    """(9, 60, 60, 1) uint8: an attention frame in grey, halved, cut into its grid cells in
    row-major order (scaled to floats by `to_float`)."""
    g = np.round(halve(np.asarray(Image.open(io.BytesIO(png)).convert("L")))).astype(np.uint8)
    s = A_SIDE
    cells = [g[r * s : (r + 1) * s, c * s : (c + 1) * s] for r in range(A_GRID) for c in range(A_GRID)]
    return np.stack(cells)[..., None]


def to_float(x):
    """Interactive and attention inputs as the model takes them."""
    return x.astype(np.float32) / 255.0 - 0.5


def prompt_png(family, data):
    """The PNG bytes of a prompt's payload."""
    image = data["images"][0] if family == "visual_match" else data["image"]
    return base64.b64decode(image)


# --- numpy forward ------------------------------------------------------------------------


def conv_np(x, w, b, dilation):
    """'same' convolution of (N, H, W, C) by (k, k, C, O)."""
    k = w.shape[0]
    pad = dilation * (k // 2)
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    n, h, wd, _ = x.shape
    out = np.zeros((n, h, wd, w.shape[3]), np.float32)
    for i in range(k):
        for j in range(k):
            patch = xp[:, i * dilation : i * dilation + h, j * dilation : j * dilation + wd]
            out += patch @ w[i, j]
    return out + b


def pool_np(x):
    n, h, w, c = x.shape
    x = x[:, : h // 2 * 2, : w // 2 * 2]
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def forward_np(arch, params, x):
    """The model's output for a batch `x`, in numpy (float32)."""
    p = 0
    for layer in arch:
        if layer[0] == "conv":
            x = conv_np(x, params[f"w{p}"], params[f"b{p}"], layer[4])
            x = np.maximum(x, 0) if layer[5] else x
            p += 1
        elif layer[0] == "pool":
            x = pool_np(x)
        elif layer[0] == "flat":
            x = x.reshape(x.shape[0], -1)
        else:
            x = x @ params[f"w{p}"] + params[f"b{p}"]
            x = np.maximum(x, 0) if layer[3] else x
            p += 1
    return x


def softmax(z, axis=-1):
    z = z - z.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def load(weights_dir, family):
    """The saved parameters of `family` (a dict of arrays)."""
    with np.load(os.path.join(weights_dir, f"{family}.npz")) as f:
        return {k: f[k].astype(np.float32) for k in f.files}


# --- decoding -----------------------------------------------------------------------------


def read_letters(logits):
    """The five letters from the visual model's (100,) logits."""
    z = logits.reshape(LENGTH, len(ALPHABET))
    return "".join(ALPHABET[i] for i in z.argmax(axis=1))


def detect(logits, threshold=0.5):
    """Shapes in the interactive model's (h, w, 7) logits: [(score, kind, x, y)] in picture
    pixels, strongest first. A detection is a local maximum of the shape probability (1 - the
    background's) over 5x5 cells; its kind is the most probable over its 3x3 cells."""
    prob = softmax(logits)
    shape = 1.0 - prob[..., -1]
    h, w = shape.shape
    padded = np.pad(shape, 2, constant_values=-1)
    peak = np.full_like(shape, -1)
    for i in range(5):
        for j in range(5):
            peak = np.maximum(peak, padded[i : i + h, j : j + w])
    found = []
    for y, x in zip(*np.nonzero((shape >= peak) & (shape > threshold))):
        y0, y1, x0, x1 = max(y - 1, 0), min(y + 2, h), max(x - 1, 0), min(x + 2, w)
        kinds = prob[y0:y1, x0:x1, :-1].sum(axis=(0, 1))
        wgt = shape[y0:y1, x0:x1]
        ys, xs = np.mgrid[y0:y1, x0:x1]
        cy = (wgt * ys).sum() / wgt.sum()
        cx = (wgt * xs).sum() / wgt.sum()
        px = int(round((cx + 0.5) * CELL))
        py = int(round((cy + 0.5) * CELL))
        found.append((float(shape[y, x]), KINDS[int(kinds.argmax())], px, py))
    found.sort(reverse=True)
    return found


def clamp(x, y):
    return min(max(x, 0), 359), min(max(y, 0), 269)


def first_click(found):
    """Stage 1: the detection of the kind seen fewest times (once, if the model is right)."""
    if not found:
        return (180, 135), "circle"
    counts = {}
    for s, k, _, _ in found:
        counts.setdefault(k, []).append(s)
    kind = min(counts, key=lambda k: (len(counts[k]), -max(counts[k])))
    s, k, x, y = next(f for f in found if f[1] == kind)
    return clamp(x, y), kind


def second_clicks(found, kind):
    """Stage 2: every detection of `kind` (two to four of them are asked for)."""
    same = [f for f in found if f[1] == kind][:4]
    if len(same) < 2:
        # Fewer than two found: add the next likeliest shapes (the stage has at least two).
        same += [f for f in found if f[1] != kind][: 2 - len(same)]
    return [clamp(x, y) for _, _, x, y in same]


def cue_probs(params, png, cue):
    """(9,): the attention model's probability that each cell of a frame holds `cue`."""
    x = to_float(attention_cells(png))
    return softmax(forward_np(ARCH["attention"], params, x))[:, CAPITALS.index(cue)]


def pick_cell(probs, threshold):
    """The cell to click (the likeliest to hold the cue), or None when even that one is not
    likely enough."""
    cell = int(np.argmax(probs))
    return cell if probs[cell] > threshold else None


def cell_centre(cell):
    """The centre of grid cell `cell`, frame pixels (within 12 px of its letter's centre; the
    family accepts clicks within 58)."""
    return cell % A_GRID * A_CELL + A_CELL // 2, cell // A_GRID * A_CELL + A_CELL // 2


def load_threshold(weights_dir, default=0.5):
    """The attention decision threshold train.py picked on held-out challenges."""
    try:
        with open(os.path.join(weights_dir, "attention.json")) as f:
            return float(json.load(f).get("threshold", default))
    except (OSError, ValueError):
        return default


def dumps(obj):
    return json.dumps(obj, separators=(",", ":"))
