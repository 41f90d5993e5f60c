#!/usr/bin/env python3
"""Fails when a workspace crate declares a dependency its code never names.

For each member's Cargo.toml, every entry of [dependencies] must be named somewhere in the
crate's library, binary, example or build code (src/, build.rs), every entry of
[dev-dependencies] there or in its tests/ and benches/: as `name::`, `use name`, `extern crate
name`, `name!` or `"name"` (serde's `with`) (a crate's name with `-` read as `_`; a `package = "…"` rename is read by its
key). This is the check `cargo machete` makes, without installing it; like it, it reads text and
does not build. Entries that are used only through features or by a derive of another crate go in
ALLOWED below, with the reason.

Usage: python3 scripts/unused-deps.py [workspace root]
"""

import pathlib
import re
import sys
import tomllib

# (crate directory, dependency) pairs used without being named in the code, and why.
ALLOWED: set[tuple[str, str]] = set()


def sources(crate: pathlib.Path, dirs):
    for d in dirs:
        root = crate / d
        if root.is_file():
            yield root
        elif root.is_dir():
            yield from root.rglob("*.rs")


def named(texts, dep: str) -> bool:
    ident = re.escape(dep.replace("-", "_"))
    pattern = re.compile(
        rf"(?<![A-Za-z0-9_]){ident}(::|!|\s*;|\s*\}}|\s+as\s)|use\s+{ident}\b|extern\s+crate\s+{ident}\b"
        # serde's `with = "crate"` and `crate = "…"` name a crate in a string.
        rf'|"{ident}(::[A-Za-z0-9_:]*)?"'

    )
    return any(pattern.search(t) for t in texts)


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    workspace = tomllib.loads((root / "Cargo.toml").read_text())
    unused = []
    for member in workspace["workspace"]["members"]:
        crate = root / member
        manifest = tomllib.loads((crate / "Cargo.toml").read_text())
        lib = [p.read_text() for p in sources(crate, ["src", "build.rs", "examples"])]
        dev = lib + [p.read_text() for p in sources(crate, ["tests", "benches"])]
        for table, texts in (("dependencies", lib), ("dev-dependencies", dev)):
            for dep in manifest.get(table, {}):
                if (member, dep) in ALLOWED:
                    continue
                # A dev-dependency that repeats a normal one (to add features) is used where
                # the normal one is.
                if table == "dev-dependencies" and dep in manifest.get("dependencies", {}):
                    continue
                if not named(texts, dep):
                    unused.append(f"{member}/Cargo.toml [{table}] {dep}")
    if unused:
        print("dependencies no code names (remove them, or list them in ALLOWED with why):")
        for line in unused:
            print(f"  {line}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
