#!/usr/bin/env python3
"""References in the tree: every file a tracked file names must exist.

refs.py ROOT: prints `ok - ...` / `not ok - ...` lines (scripts/test.sh's suite protocol).
1. Every Markdown link of a tracked .md file (not an http(s) or mailto link) resolves, relative
   to the file, to a tracked file or folder, and its #anchor, when given, to a heading there.
2. Every path the docs (README.md, docs/*.md) write in backticks under a top-level folder or file
   of the repository exists (a glob must match something); build/, .run/ and tests/node_modules/
   are made by the build, not tracked, and placeholders in capitals (NNNN, VERSION) are patterns.
3. Every Markdown file name any tracked text file mentions exists, next to it or from the root (this is
   what catches citations of notes the repository does not contain).
4. Every section a tracked file cites by a Markdown file's name (README alone for the README), a
   colon or a comma and the start of its title, as in `docs/fleet.md: Rotating the state secret`
   (the settings file, the unit and the alert rules point their readers so), is the start of a
   heading of that file. Not in migrations/: a comment there is part of what a database records.
"""
import glob
import os
import re
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
os.chdir(root)
tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], check=True,
                         capture_output=True, text=True).stdout.split("\n")
tracked = [t for t in tracked if t and os.path.exists(t)]
files = set(tracked)
dirs = {os.path.dirname(t) for t in tracked}
for d in list(dirs):
    while d:
        dirs.add(d)
        d = os.path.dirname(d)
failures = 0


def report(ok, what, why=""):
    global failures
    if ok:
        print("ok - " + what)
    else:
        failures += 1
        print("not ok - %s%s" % (what, ": " + why if why else ""))


def strip_code(text):
    """Markdown without fenced blocks (links inside code are not links)."""
    return re.sub(r"(?ms)^```.*?^```", "", text)


def anchors(path):
    out = set()
    for line in strip_code(open(path, encoding="utf-8").read()).split("\n"):
        m = re.match(r"#{1,6}\s+(.*)", line)
        if m:
            h = m.group(1).strip().lower()
            h = re.sub(r"[^\w\- ]", "", h)
            out.add(h.replace(" ", "-"))
    return out


def exists(p):
    p = os.path.normpath(p)
    return p in files or p in dirs


md = sorted(t for t in tracked if t.endswith(".md"))
docs = ["README.md"] + sorted(t for t in md if t.startswith("docs/"))

# 1. Markdown links.
for path in md:
    text = strip_code(open(path, encoding="utf-8").read())
    text = re.sub(r"`[^`\n]*`", "", text)
    bad = []
    n = 0
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        n += 1
        ref, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), ref)) if ref else path
        if not exists(dest):
            bad.append(target + " (no such file)")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad.append(target + " (no such heading)")
    report(not bad, "%s: its %d links resolve" % (path, n), "; ".join(bad))

# 2. Paths in backticks in the docs.
tops = {t.split("/")[0] for t in tracked}
made = ("build/", ".run/", "tests/node_modules/")
METHOD = r"(resources|prompts|tools|server|completion|notifications|logging|subscriptions)/[a-z/]+"
for path in docs:
    text = open(path, encoding="utf-8").read()
    bad = []
    n = 0
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            word = word.strip("(),;:'\"")
            word = re.sub(r":[0-9]+$", "", word)
            if "/" not in word and word not in tops:
                continue
            if word.split("/")[0] not in tops or (word + "/").startswith(made) or "://" in word:
                continue
            if re.search(r"[A-Z]{3,}|\$|\{", word.split("/", 1)[-1]):
                continue  # a pattern: NNNN_name.sql, $(PREFIX), {bikeId}
            if re.fullmatch(METHOD, word) and not exists(word):
                continue  # an MCP method (resources/read, server/discover), not a path
            n += 1
            if not (exists(word) or glob.glob(word)):
                bad.append(word)
    report(not bad, "%s: the %d repository paths it names exist" % (path, n),
           ", ".join(sorted(set(bad))))

# 3. Markdown file names mentioned anywhere in the tracked text.
bad = []
for path in tracked:
    if path.endswith((".png", ".gz", ".ico")) or "/node_modules/" in path:
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, IsADirectoryError):
        continue
    for name in set(re.findall(r"(?<![\w/.$%{}:-])([\w.-][\w./-]*\.md)\b", text)):
        if "://" in name or name.startswith(made):
            continue
        here = os.path.join(os.path.dirname(path), name)
        if not (exists(here) or exists(name) or glob.glob("**/" + name, recursive=True)):
            bad.append("%s names %s" % (path, name))
report(not bad, "every .md file a tracked file mentions exists (%d files read)" % len(tracked),
       "; ".join(sorted(bad)))

# 4. Sections cited by name: "(docs/fleet.md: Rotating the state secret)".
CITE = re.compile(r"(?<![\w/.-])(README(?=: )|[\w./-]+\.md(?=[:,] [A-Z]))[:,] ([\w' -]*[\w'])")
bad, n = [], 0
for path in tracked:
    if "migrations" in path or path.endswith((".png", ".gz", ".ico", "package-lock.json")) \
            or "/node_modules/" in path:
        continue
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, IsADirectoryError):
        continue
    for name, section in CITE.findall(text):
        name = "README.md" if name == "README" else name
        dest = next((p for p in (os.path.join(os.path.dirname(path), name), name) if p in files), None)
        if dest is None:
            continue  # a file that does not exist is check 3's
        n += 1
        heads = [re.sub(r"^#+\s*", "", line).strip().lower()
                 for line in strip_code(open(dest, encoding="utf-8").read()).split("\n")
                 if re.match(r"#{1,6}\s", line)]
        if not any(h.startswith(section.lower()) for h in heads):
            bad.append('%s cites %s: "%s", which no heading there begins with' % (path, dest, section))
report(not bad, "the %d sections tracked files cite by their title are headings of the file named" % n,
       "; ".join(sorted(set(bad))))
sys.exit(1 if failures else 0)
