#!/usr/bin/env python3
"""Fails if the modules of a crate import each other in a circle.

Usage: tests/module-cycles.py [CRATE_SRC ...]   (default: tour/src)

A module is a source file (an inline `mod x { .. }` counts as part of its
file). An edge a -> b is a path in a's code, outside comments and string
literals, that names b or an item in it: `crate::b::..`, `super::..`,
`self::..`, a child module's name, and each member of a `{..}` group of a
`use`. Names the crate root re-exports (`pub use m::{A, B}` in lib.rs)
resolve to the module that defines them. A module's paths to its own
ancestors are left out: a child sees its parent's items by design, and a
parent that uses its child would otherwise always be in a circle with it.
Prints each module's edges with -v, each set of modules in a circle with
the edges among them, and exits 1 if there is one. `.ci/run` runs it on
every crate's src/ from the workspace root.
"""

import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self|[a-z_][a-z0-9_]*)((?:::(?:[A-Za-z_][A-Za-z0-9_]*|\{))+)")
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*(;|\{)")


def strip(text):
    """The code without comments, string and char literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "' '", text)
    return re.sub(r"//[^\n]*", "", text)


def modules(src):
    """Module path (tuple) -> stripped text, for every file under src."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)[:-3].split(os.sep)
            if rel in (["lib"], ["main"]):
                rel = []
            elif rel[-1] == "mod":
                rel = rel[:-1]
            with open(os.path.join(root, f)) as fh:
                out[tuple(rel)] = strip(fh.read())
    return out


def expand(tail):
    """`::a::{b, c::{d, e}}` -> [[a, b], [a, c, d], [a, c, e]] (also without groups)."""
    tail = tail.strip()
    if tail.startswith("::"):
        tail = tail[2:]
    if "{" not in tail:
        return [[s for s in tail.split("::") if s]]
    head, _, rest = tail.partition("{")
    prefix = [s for s in head.split("::") if s]
    depth, item, items = 0, "", []
    for ch in rest:
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            items.append(item)
            item = ""
        else:
            item += ch
    items.append(item)
    out = [prefix] if not items else []
    for it in items:
        it = re.sub(r"\s+as\s+\w+", "", it.strip())
        for sub in expand(it) if it else []:
            out.append(prefix + sub)
    return out or [prefix]


def group_text(text, start):
    """The path starting at `start`, with its balanced `{..}` groups."""
    depth, i = 0, start
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        elif depth == 0 and not (ch.isalnum() or ch in "_:"):
            return text[start:i]
        i += 1
    return text[start:]


def reexports(mods):
    """Name -> defining module for the root's `pub use`s."""
    out = {}
    for m in re.finditer(r"pub use ([a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*(?:::\{[^}]*\}|::[A-Za-z_][A-Za-z0-9_]*))", mods.get((), "")):
        for path in expand(m.group(1)):
            if len(path) >= 2:
                out[path[-1]] = tuple(path[:-1])
    return out


def edges(mods):
    known = set(mods)
    exported = reexports(mods)
    out = {m: set() for m in mods}
    for m, text in mods.items():
        # Inline modules: the names in scope from each line on, to resolve
        # `super` inside them (their braces counted, literals stripped).
        stack, depth, scopes, pos = [], 0, [], 0
        for line in text.split("\n"):
            d = MOD_DECL.match(line)
            if d and d.group(2) == "{":
                stack.append((d.group(1), depth))
            scopes.append((pos, tuple(n for n, _ in stack)))
            depth += line.count("{") - line.count("}")
            while stack and depth <= stack[-1][1]:
                stack.pop()
            pos += len(line) + 1
        children = {k[-1] for k in known if len(k) == len(m) + 1 and k[: len(m)] == m}
        for p in PATH.finditer(text):
            head = p.group(1)
            if head not in ("crate", "super", "self") and head not in children:
                continue
            if p.start() > 0 and text[p.start() - 1] == ":":
                continue
            inner = ()
            for at, names in scopes:
                if at > p.start():
                    break
                inner = names
            base = m + inner
            for path in expand(group_text(text, p.start())):
                target = resolve(path, base, known, exported)
                if target is not None and m[: len(target)] != target:
                    out[m].add(target)
    return out


def resolve(path, base, known, exported):
    """The file module a path from module `base` names, or None."""
    at = list(base)
    segs = list(path)
    if not segs:
        return None
    if segs[0] == "crate":
        at, segs = [], segs[1:]
    while segs and segs[0] in ("super", "self"):
        if segs.pop(0) == "super":
            at = at[:-1]
    if not at and segs and segs[0] in exported and tuple(segs[:1]) not in known:
        return exported[segs[0]]
    while segs and tuple(at + [segs[0]]) in known:
        at.append(segs.pop(0))
    # An inline module's name is not a file module: the deepest file one.
    while tuple(at) not in known:
        at = at[:-1]
    return tuple(at)


def cycles(graph):
    """Each set of modules that reach each other (Tarjan's strongly
    connected components of more than one module): every circle lies in one."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
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
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def name(m):
    return "crate" + "".join("::" + s for s in m)


def main(argv):
    verbose = "-v" in argv
    srcs = [a for a in argv if a != "-v"] or ["tour/src"]
    failed = False
    for src in srcs:
        graph = edges(modules(src))
        if verbose:
            for m in sorted(graph):
                print(f"{src}: {name(m)} -> {', '.join(name(t) for t in sorted(graph[m])) or '(none)'}")
        found = cycles(graph)
        for comp in found:
            inside = [f"{name(a)} -> {name(b)}" for a in comp for b in sorted(graph[a]) if b in comp]
            print(f"{src}: circle among {', '.join(name(c) for c in comp)}: {'; '.join(inside)}")
        print(f"{src}: {len(graph)} modules, {sum(map(len, graph.values()))} edges, {len(found)} circles")
        failed |= bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
