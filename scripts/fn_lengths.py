#!/usr/bin/env python3
"""Lists the longest functions under the given directories (default: src).

Counts the lines from a `fn` line to its closing brace, skipping `#[cfg(test)]`
modules, so that issue notes can show function lengths before and after a change.
Usage: scripts/fn_lengths.py [--top N] [--over LINES] [DIR ...]
"""
import argparse
import pathlib
import re

FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?fn\s+(\w+)")


def strip_strings(line):
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return line.split("//")[0]


def functions(path):
    lines = path.read_text(errors="replace").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]":
            depth, started = 0, False
            i += 1
            while i < len(lines):
                code = strip_strings(lines[i])
                depth += code.count("{") - code.count("}")
                started = started or "{" in code
                i += 1
                if started and depth <= 0 or (not started and code.rstrip().endswith(";")):
                    break
            continue
        match = FN.match(lines[i])
        if match:
            depth, started, start = 0, False, i
            while i < len(lines):
                code = strip_strings(lines[i])
                depth += code.count("{") - code.count("}")
                started = started or "{" in code
                if not started and code.rstrip().endswith(";"):
                    break
                if started and depth <= 0:
                    yield match.group(6), start + 1, i - start + 1
                    break
                i += 1
        i += 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--over", type=int, default=0)
    parser.add_argument("dirs", nargs="*", default=["src"])
    args = parser.parse_args()
    found = []
    for directory in args.dirs:
        for path in sorted(pathlib.Path(directory).rglob("*.rs")):
            for name, line, length in functions(path):
                found.append((length, f"{path}:{line}", name))
    found.sort(reverse=True)
    for length, where, name in found[: args.top]:
        if length > args.over:
            print(f"{length:5} {where} {name}")


if __name__ == "__main__":
    main()
