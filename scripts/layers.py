#!/usr/bin/env python3
"""Which of the crate's layers import which, and whether any two import each other.

A layer is a top-level module of src/ (the operator's are operator::api,
::model, ::decide, ::reconcile, ::runtime). Edges come from `crate::...`
paths outside doc comments and test modules. Exits 1 on a cycle, so CI keeps
the layering ARCHITECTURE.md describes.
"""
import re, pathlib, sys, itertools
root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
def group(path):
    parts = path.relative_to(root).with_suffix("").parts
    if parts[0] == "operator" and len(parts) > 1 and parts[1] != "mod":
        return "operator::" + parts[1]
    return parts[0]
edges = {}
for f in root.rglob("*.rs"):
    g = group(f)
    text = f.read_text()
    text = text.split("#[cfg(test)]")[0]
    text = "\n".join(l for l in text.split("\n") if not l.strip().startswith("//"))
    for m in re.finditer(r"crate::([a-z_]+)(?:::([a-z_]+))?", text):
        a, b = m.group(1), m.group(2)
        t = f"operator::{b}" if a == "operator" and b else a
        if t != g:
            edges.setdefault(g, set()).add(t)
for g in sorted(edges):
    print(f"{g:22} -> {', '.join(sorted(edges[g]))}")
# cycles among groups
def reach(a, seen=None):
    seen = seen or set()
    for b in edges.get(a, ()):
        if b not in seen:
            seen.add(b); reach(b, seen)
    return seen
cyc = sorted({tuple(sorted((a, b))) for a in edges for b in edges[a] if a in reach(b)})
print("cycles:", cyc or "none")
sys.exit(1 if cyc else 0)
