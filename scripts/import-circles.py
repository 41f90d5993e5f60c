#!/usr/bin/env python3
"""Fails when modules of one crate import each other, directly or around a loop.

Reads every `crate::…`, `super::…` and `self::…` path in each crate's non-test source (comments
and `#[cfg(test)] mod tests` blocks left out), resolves it to the module it names, and looks
for strongly connected components of more than one module. A module and its own ancestors or
descendants are not counted (a parent declares its children). Usage: import-circles.py DIR…
(each a crate's src directory); prints each circle and exits 1 when there is one.
"""
import collections
import os
import re
import sys


def modules(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(dirpath, name)
            parts = os.path.relpath(path, root)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            out[path] = "::".join(parts)
    return out


def related(a, b):
    return a == b or a.startswith(b + "::") or b.startswith(a + "::") or not a or not b


def use_paths(tree):
    """The paths of one `use` tree (`a::{b, c::{d, e as f}}`), each as (segments, alias)."""
    tree = tree.strip()
    depth, brace = 0, -1
    for i, ch in enumerate(tree):
        if ch == "{" and depth == 0:
            brace = i
            break
    if brace < 0:
        name, _, alias = tree.partition(" as ")
        segs = [p for p in name.strip().split("::") if p]
        return [(segs, alias.strip() or (segs[-1] if segs else ""))]
    prefix = [p for p in tree[:brace].split("::") if p]
    inner = tree[brace + 1:tree.rindex("}")]
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    out = []
    for part in parts:
        if not part.strip():
            continue
        for segs, alias in use_paths(part):
            if segs == ["self"]:
                out.append((prefix, alias if alias != "self" else prefix[-1]))
            else:
                out.append((prefix + segs, alias))
    return out


def references(path, module, known):
    text = "\n".join(
        line for line in open(path, encoding="utf-8").read().split("\n")
        if not line.strip().startswith("//")
    )
    text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
    here = module.split("::") if module else []
    found = set()

    def resolve(base, rest):
        if base == "crate":
            segs = rest
        elif base == "super":
            segs = here[:-1] + rest
        else:
            segs = here + rest
        for k in range(len(segs), 0, -1):
            target = "::".join(segs[:k])
            if target in known:
                if not related(target, module):
                    found.add(target)
                return target
        return None

    for m in re.finditer(r"\b(crate|super|self)((?:::[a-z_][a-z0-9_]*)+)", text):
        resolve(m.group(1), [p for p in m.group(2).split("::") if p])
    # `use` trees: grouped paths, and the names they bring in for modules (`use crate::lock::{self,
    # frame}` then `lock::baseline::solve`).
    aliases = {}
    for m in re.finditer(r"\buse\s+(crate|super|self)::([^;]*);", text, flags=re.S):
        for segs, alias in use_paths(m.group(2)):
            target = resolve(m.group(1), segs)
            if target is not None and target == "::".join(
                (here[:-1] if m.group(1) == "super" else here if m.group(1) == "self" else []) + segs
            ):
                aliases[alias] = target
    for alias, target in aliases.items():
        for m in re.finditer(r"(?<![:\w])" + re.escape(alias) + r"((?:::[a-z_][a-z0-9_]*)+)", text):
            resolve("crate", target.split("::") + [p for p in m.group(1).split("::") if p])
    return found


def circles(root):
    mods = modules(root)
    known = set(mods.values())
    graph = collections.defaultdict(set)
    for path, module in mods.items():
        if path.endswith("tests.rs") or os.sep + "tests" + os.sep in path:
            continue
        graph[module] |= references(path, module, known)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def main():
    bad = False
    for root in sys.argv[1:]:
        for comp in circles(root):
            bad = True
            print(f"{root}: modules that import each other: {', '.join(comp)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
