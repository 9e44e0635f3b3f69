#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a circle.

Usage: scripts/import_cycles.py SRC_DIR...

Reads every `.rs` file under each SRC_DIR as text (its `#[cfg(test)]`
module and comments left out) and collects the modules it names through
`use crate::…`, `use super::…`, `use self::…` and inline `crate::…` paths.
Two kinds of circle are reported:

- files: module A imports B and B, through any chain, imports A;
- folders: among the modules of one folder (`engine/turn`, `engine/modes`,
  …), counting every file inside each, one imports another that imports it
  back. At the crate's root this is the layering in docs/architecture.md:
  a module imports only modules below it.

A module importing its own parent or child is not a circle (a folder's
`mod.rs` declares its files). Exit status 1 lists every circle.
"""

import os
import re
import sys
from collections import defaultdict

TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{")
USE = re.compile(r"use\s+(crate|super|self)::([^;]+);", re.S)
INLINE = re.compile(r"[^\w:]crate((?:::\w+)+)")


def modules(src):
    """Module path (a tuple) -> file, for every file under `src`."""
    found = {}
    for root, _, files in os.walk(src):
        for name in files:
            if name.endswith(".rs"):
                path = os.path.relpath(os.path.join(root, name), src)
                parts = tuple(path[:-3].split(os.sep))
                if parts[-1] in ("mod", "lib", "main"):
                    parts = parts[:-1]
                found[parts] = path
    return found


def expand(prefix, tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e]."""
    tree = tree.strip()
    if "{" not in tree:
        return [prefix + [p.strip() for p in tree.split("::") if p.strip()]]
    head, body = tree.split("{", 1)
    head = [h for h in head.strip().strip(":").split("::") if h]
    body = body.rsplit("}", 1)[0]
    items, depth, current = [], 0, ""
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    items.append(current)
    return [p for item in items if item.strip() for p in expand(prefix + head, item)]


def imports(src, mods):
    """Module -> the modules it imports (not itself, its parents or children)."""

    def resolve(path):
        path = [p for p in path if p != "self"]
        while path:
            if tuple(path) in mods:
                return tuple(path)
            path.pop()
        return None

    edges = defaultdict(set)
    for mod, path in mods.items():
        with open(os.path.join(src, path), encoding="utf-8") as f:
            text = f.read()
        test = TEST_MODULE.search(text)
        if test:
            text = text[: test.start()]
        text = re.sub(r"//[^\n]*", "", text)
        targets = []
        for m in USE.finditer(text):
            base = {"crate": [], "self": list(mod), "super": list(mod[:-1])}[m.group(1)]
            targets += [resolve(base + p) for p in expand([], m.group(2))]
        targets += [resolve(m.group(1).strip(":").split("::")) for m in INLINE.finditer(text)]
        for target in targets:
            related = target and (target == mod[: len(target)] or mod == target[: len(mod)])
            if target and not related:
                edges[mod].add(target)
    return edges


def circles(edges):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted("::".join(m) or "(root)" for m in component))

    for v in list(edges):
        if v not in index:
            visit(v)
    return found


def folder_edges(edges):
    """Edges between sibling modules: A -> B where A and B share a parent."""
    siblings = defaultdict(set)
    for a, targets in edges.items():
        for b in targets:
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            if common < len(a) and common < len(b):
                siblings[a[: common + 1]].add(b[: common + 1])
    return siblings


def main(roots):
    failed = False
    for src in roots:
        mods = modules(src)
        edges = imports(src, mods)
        for kind, found in (("files", circles(edges)), ("folders", circles(folder_edges(edges)))):
            for circle in found:
                failed = True
                print(f"{src}: {kind} import each other in a circle: {', '.join(circle)}")
    if not failed:
        print(f"no import circles in {', '.join(roots)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["shared/src"]))
