#!/usr/bin/env python3
"""Check that the code map of server/README.md (its first ``` block) names every .c file of
server/ and domain/, each under its own folder.

The block is a tree: a line whose first word ends in "/" opens a folder (server/transport/, or
pg/ indented under domain/), which holds the lines indented deeper than it; a name like http.c
on such a line is that folder's file, a name with a slash (server/main.c, domain/pg/db.c) is
read from the repository's root. A .c file of server/ or domain/ that the block never names
under its folder fails, naming the file; so does a name under a folder that has no such file (a
map naming what is gone). Usage: codemap.py [--root DIR]; exit 1 on any finding."""
import argparse
import os
import re
import sys

README = "server/README.md"
MAPPED = ("server", "domain")  # every .c below these folders must be named
NAME = re.compile(r"[A-Za-z0-9_./-]*[A-Za-z0-9_]\.c\b")


def code_block(text):
    m = re.search(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    return m.group(1).splitlines() if m else []


def named(lines):
    """The repository paths the tree names: {path: line number}."""
    out, stack = {}, []  # stack of (indent, folder)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        first = line.split()[0].rstrip(",")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        folder = stack[-1][1] if stack else ""
        if first.endswith("/"):
            opened = first if "/" in first.rstrip("/") or not folder else folder + first
            stack.append((indent, opened))
            folder = opened
        elif "/" in first:
            folder = os.path.dirname(first) + "/"  # server/main.c, cfg.c: both of server/
        for name in NAME.findall(line):
            path = name if "/" in name else folder + name
            out.setdefault(path, n)
    return out


def sources(root):
    found = []
    for top in MAPPED:
        for folder, _, files in os.walk(os.path.join(root, top)):
            found += [os.path.relpath(os.path.join(folder, f), root).replace(os.sep, "/")
                      for f in files if f.endswith(".c")]
    return sorted(found)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="repository root (default: ..)")
    root = os.path.abspath(ap.parse_args().root)
    with open(os.path.join(root, README), encoding="utf-8") as f:
        names = named(code_block(f.read()))
    files = sources(root)
    findings = ["%s: %s is not in the code map (add it under its folder, with what it holds)"
                % (README, p) for p in files if p not in names]
    findings += ["%s: code map line %d names %s, which does not exist (remove or rename it)"
                 % (README, line, p) for p, line in sorted(names.items())
                 if p.startswith(tuple(t + "/" for t in MAPPED)) and p not in files]
    for line in findings:
        print(line)
    print("codemap: %d .c files of %s, %d not in the map, %d named but missing"
          % (len(files), " and ".join(MAPPED), sum("not in" in f for f in findings),
             sum("does not exist" in f for f in findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
