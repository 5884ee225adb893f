#!/usr/bin/env python3
"""Import circles among a crate's modules, and its largest files and functions.

Reads every `.rs` file under a crate's `src/`, maps each file to its module path
(`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`), and draws an edge from a file to
each module of its own crate it names in a `use crate::…` / `use super::…` line or
a `crate::a::b` path in code (a folder's `mod.rs` also to each child it names
as `child::`). An import circle is a strongly connected component of that graph
with more than one file (Tarjan's algorithm). A parent module and its own child
modules are not exempt: a child that uses its parent while the parent uses it is
a circle too. Test modules are left out: a test may use any module.

Usage: import_circles.py CRATE_DIR [CRATE_DIR ...]
Prints, per crate: the circles (files in each), the files over 1,000 lines and
the functions over 150 lines (a `fn` to its closing brace at the same indent).
"""

import re
import sys
from pathlib import Path

USE = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
FN = re.compile(r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:unsafe\s+)?(?:const\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def module_of(src: Path, f: Path) -> tuple:
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments(text: str) -> str:
    """The code without comments and without its test module (`#[cfg(test)] mod
    tests`, at the end of a file by this project's style): tests may use any module."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests\b", text, flags=re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def resolve(modules: dict, here: tuple, is_dir_module: bool, root: str, path: list) -> tuple | None:
    """The longest module of this crate that the path names."""
    if root == "crate":
        base = []
    else:
        # `super` from a file module is its parent's parent module; from a
        # `mod.rs` it is the parent of the folder's module.
        base = list(here[:-1])
        while path and path[0] == "super":
            path = path[1:]
            base = base[:-1]
    full = base + path
    for n in range(len(full), 0, -1):
        if tuple(full[:n]) in modules:
            return tuple(full[:n])
    return None


def tarjan(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def long_functions(text: str, limit: int):
    lines = text.splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            indent = m.group(1)
            close = indent + "}"
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != close:
                j += 1
            if j - i + 1 > limit:
                found.append((m.group(2), i + 1, j - i + 1))
            i = j if j < len(lines) else i + 1
        i += 1
    return found


def crate_report(crate: Path):
    src = crate / "src"
    files = sorted(p for p in src.rglob("*.rs"))
    modules = {module_of(src, f): f for f in files}
    edges = {}
    for mod, f in modules.items():
        text = strip_comments(f.read_text(encoding="utf-8"))
        is_dir = f.name in ("mod.rs", "lib.rs", "main.rs")
        here = mod + ("mod",) if is_dir else mod
        for m in USE.finditer(text):
            path = [p for p in m.group(2).split("::") if p]
            target = resolve(modules, here, is_dir, m.group(1), path)
            if target is None or target == mod or target == ():
                continue
            edges.setdefault(mod, set()).add(target)
        if is_dir:
            # A folder module names its own children without a prefix
            # (`use child::Item`, `child::f()`).
            for child in (m for m in modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod):
                if re.search(r"(?<![A-Za-z0-9_:])" + child[-1] + r"::", text):
                    edges.setdefault(mod, set()).add(child)
    circles = [c for c in tarjan(list(modules), edges) if len(c) > 1]
    print(f"## {crate}")
    if not circles:
        print("import circles: none")
    for c in sorted(circles, key=len, reverse=True):
        names = sorted(str(modules[m].relative_to(crate)) for m in c)
        print(f"import circle of {len(c)} files: {', '.join(names)}")
    for f in files:
        text = f.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n > 1000:
            print(f"file over 1,000 lines: {f.relative_to(crate)} ({n})")
        for name, line, length in long_functions(text, 150):
            print(f"function over 150 lines: {f.relative_to(crate)}:{line} {name} ({length})")
    print()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        crate_report(Path(d))


if __name__ == "__main__":
    main()
