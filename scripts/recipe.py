#!/usr/bin/env python3
"""Check that the one recipe for adding a capability, server/capabilities/README.md, says what
`make new-capability` does, and that the pages about adding one send the reader there.

For each kind (read, write, step), its section ("## Adding a read", "## Adding a write",
"## Adding a step ..."): the `make new-capability` line names that KIND; the files it says are
written (the backticked paths that open a bullet, before its first colon, and every backticked
path of the bullet "The generated edits") are exactly those `scripts/new-capability.sh --plan
NAME KIND` lists; and the commands of the block after "Run:" are exactly its "run" lines. Then
each page of LINKED names the recipe (a link to server/capabilities/README.md). A finding names
the file, what it says and what the scaffold does. Phrases of the recipes that are gone (a
capability's C file, its schema files, its lines in catalog.c) are scripts/stale.py's RETIRED.
Usage: recipe.py [--root DIR]. Exit 1 on any finding."""
import argparse
import os
import re
import subprocess
import sys

RECIPE = "server/capabilities/README.md"
KINDS = {"read": "## Adding a read", "write": "## Adding a write", "step": "## Adding a step"}
LINKED = ("docs/contributing.md", "server/README.md", "docs/architecture.md",
          "docs/capabilities.md")
PATH = re.compile(r"`([\w.-]+(?:/[\w.-]+)*\.(?:json|sql|c|mjs|md))`")


def section(text, heading):
    """The lines of the section that starts with heading, up to the next "## "."""
    lines = text.split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith(heading)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")),
               len(lines))
    return lines[start:end]


def said(lines):
    """(the new-capability line, the files the bullets say are written, the commands to run)."""
    make = next((l for l in lines if l.startswith("make new-capability")), "")
    bullets, cur = [], None
    for l in lines:
        if l.startswith("- "):
            cur = [l[2:]]
            bullets.append(cur)
        elif cur is not None and l.startswith("  "):
            cur.append(l.strip())
        else:
            cur = None
    files = set()
    for b in (" ".join(b) for b in bullets):
        if b.startswith("The generated edits"):
            files |= set(PATH.findall(b))
        elif b.startswith("`"):
            files |= set(PATH.findall(b.split(":")[0]))
    run = next((i for i, l in enumerate(lines) if l.rstrip().endswith("Run:")), None)
    commands = []
    if run is not None:
        block = lines[run + 1:]
        for l in block[block.index("```sh") + 1:] if "```sh" in block else []:
            if l.startswith("```"):
                break
            commands.append(l.split("#")[0].strip())
    return make, files, [c for c in commands if c]


def plan(root, kind):
    out = subprocess.run([os.path.join(root, "scripts/new-capability.sh"), "--plan", "NAME", kind],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return ({l[5:] for l in out if l.startswith("file ")},
            [l[4:] for l in out if l.startswith("run ")])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = ap.parse_args().root
    text = open(os.path.join(root, RECIPE), encoding="utf-8").read()
    findings = []
    for kind, heading in KINDS.items():
        lines = section(text, heading)
        if lines is None:
            findings.append(f"{RECIPE}: no section \"{heading}\": the recipe for KIND={kind}")
            continue
        make, files, commands = said(lines)
        want_files, want_run = plan(root, kind)
        if f"KIND={kind}" not in make:
            findings.append(f"{RECIPE}: \"{heading}\" does not start with make new-capability "
                            f"... KIND={kind}")
        for f in sorted(want_files - files):
            findings.append(f"{RECIPE}: \"{heading}\" does not say that it writes {f} (make "
                            f"new-capability KIND={kind} does)")
        for f in sorted(files - want_files):
            findings.append(f"{RECIPE}: \"{heading}\" says it writes {f}, which make "
                            f"new-capability KIND={kind} does not")
        if commands != want_run:
            findings.append(f"{RECIPE}: \"{heading}\" runs {commands}; make new-capability "
                            f"says to run {want_run}")
    for page in LINKED:
        body = open(os.path.join(root, page), encoding="utf-8").read()
        if not re.search(r"\]\((?:\.\./)*(?:server/)?capabilities/README\.md(?:#[\w-]+)?\)",
                         body):
            findings.append(f"{page}: adding a capability is {RECIPE}'s: link to it")
    for f in findings:
        print(f)
    print(f"recipe: {len(KINDS)} recipes against make new-capability, {len(LINKED)} pages, "
          f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
