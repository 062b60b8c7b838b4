#!/usr/bin/env python3
"""Check that comments cite what exists: every repository path a comment names is a file or
folder of the tree, and no text of the tree describes what is gone (RETIRED).

Comments are read where they are comments: /* */ and // in .c and .h files; # in .sh, .py,
.yml, Makefile and the scripts without an extension that start with a shell or Python #! line,
and a Python file's docstrings; -- in .sql. A word of a comment is a path when it has a slash and
starts with a top-level folder or file of the repository (server/transport/http.c, docs/fleet.md,
migrations/functions/), when it is a file name relative to the file's folder (../common/mem.h),
or when it is a bare file name (ending in .c, .h, .sh, .py, .sql, .mjs or .md, as a
comment names a file of its own folder: http_frame.c) that is found nowhere in the tree.
Not paths: URLs; what the build or a run writes (build/, $(B)/, gen/capabilities.h and the rest of
gen/, and whatever git ignores: node_modules/, docker/secrets/); an MCP method (server/discover,
tools/call); patterns (NNNN_name.sql, tests/NAME/suite.sh, $x, {x}, *) and the placeholder names
of PLACEHOLDERS. A finding names the file, the line and the missing path.
A retired phrase (RETIRED: a mechanism the code no longer has) fails wherever it is written, in
code, comments, metric help or docs, but in the history kept as such (RETIRED_HISTORY), naming
the file, the line and what is true now. Exit 1 on any finding.
Usage: stale.py [--root DIR]; the files are git's (tracked and untracked, not ignored)."""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

# ---- The rules, in one place ------------------------------------------------------------------
C_FILES = (".c", ".h", ".mjs", ".js")  # /* */ and // comments
HASH_FILES = (".sh", ".py", ".yml", ".yaml")  # and Makefile, and #! scripts without an extension
SQL_FILES = (".sql",)
SKIPPED = ("tests/integration/migrations-",)  # copies of old files, kept as they were
MADE = ("build/", "$(B)/", "$B/", "gen/")  # what the build writes; git ignores the rest it makes
PLACEHOLDERS = {"schema.function.sql"}  # a kind of file, as the migrations name function files
BARE = re.compile(r"[A-Za-z_][\w-]*(?:\.[\w-]+)*\.(?:c|h|sh|py|sql|mjs|md)")
METHOD = re.compile(r"(resources|prompts|tools|server|completion|notifications|logging|"
                    r"subscriptions|tasks|elicitation|sampling|roots)/[a-z/]+")  # tools/call
PATTERN = re.compile(r"[A-Z]{3,}|(^|/)[A-Z]([./]|$)|[$*{}<>]|\.\.\.")  # NNNN, X.h, $x, {x}, *
RETIRED = [  # (phrase, what is true now): a phrase of a mechanism the code no longer has
    (r"group[- ]commit", "a read's audit rows are written with the read, in its caller's "
     "statement of the batch (domain/reads.h)"),
    # The recipe for adding a capability before the declarations (server/capabilities/README.md
    # is the one now; scripts/recipe.py holds it to what make new-capability writes).
    (r"capability (source )?files?\b", "a capability is its declaration, server/capabilities/NAME.json"),
    (r"capabilities/schema[s]/|schemas/(\*|NAME)\.(input|output)\.json",
     "a tool's schemas are in its declaration (server/capabilities/NAME.json)"),
    (r"capabilities/NAME\.c\b", "a capability is its declaration, server/capabilities/NAME.json"),
    (r"two lines (naming it )?in (the catalogue|`?catalog\.c)",
     "the build lists every declaration: no line of catalog.c names one"),
    (r"\.?version`? in `?server/capabilities/catalog\.c",
     "a row's version is its declaration's governance version"),
    (r"schema[_-]embed", "the declarations' generator is scripts/capgen.c"),
]
RETIRED_HISTORY = (  # what says how things were, on purpose
    "bench/RESULTS.md", "bench/README.md",  # the measures of each pass, and its decisions
    "migrations/0",  # numbered files: what databases applied, comments and all
    # the per-call read before batching, kept for bench/'s comparison line (pg_server_sql_read)
    "migrations/functions/fleet.audit_batch.sql",
    "migrations/functions/fleet.bike_status_read_as.sql",
)
# -------------------------------------------------------------------------------------------------

WORD = re.compile(r"[\w.$(){}*<>/-]*[\w/]")
URL = re.compile(r"[a-z][a-z0-9+.-]*://\S*")


def tree(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard"], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    files = {f for f in out if f and os.path.isfile(os.path.join(root, f))}
    dirs = set()
    for f in files:
        d = os.path.dirname(f)
        while d and d not in dirs:
            dirs.add(d)
            d = os.path.dirname(d)
    return files, dirs


def kind(root, path):
    """How the file writes its comments: "c", "hash", "sql" or None (not read)."""
    name = os.path.basename(path)
    if path.endswith(C_FILES):
        return "c"
    if path.endswith(SQL_FILES):
        return "sql"
    if path.endswith(HASH_FILES) or name == "Makefile" or name.endswith(".mk"):
        return "hash"
    if "." not in name:
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                first = f.readline()
        except (UnicodeDecodeError, OSError):
            return None
        if re.match(r"#!.*\b(ba)?sh\b|#!.*python", first):
            return "hash"
    return None


def c_comments(text):
    """(line number, comment text) of every /* */ and // comment, strings and chars skipped."""
    out = []
    for m in re.finditer(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', text,
                         re.S):
        if m.group(0).startswith("/"):
            line = text.count("\n", 0, m.start()) + 1
            for i, part in enumerate(m.group(0).split("\n")):
                out.append((line + i, part))
    return out


def line_comments(text, mark, shell=False):
    """(line number, comment text) of what follows mark outside quotes, on each line; a shell
    here-document's lines are its text, not comments."""
    out, heredoc = [], None
    for n, line in enumerate(text.split("\n"), 1):
        if heredoc:
            if line.lstrip("\t") == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<-?(['\"]?)([A-Za-z_]\w*)\1", line) if shell else None
        heredoc = m.group(2) if m else None
        quote = None
        i = 0
        while i < len(line):
            ch = line[i]
            if quote:
                if ch == "\\" and quote != "'":
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
            elif line.startswith(mark, i) and (mark != "#" or i == 0 or line[i - 1] in " \t;"):
                out.append((n, line[i + len(mark):]))
                break
            elif mark == "#" and ch == "\\":
                i += 1
            i += 1
    return out


def docstrings(text):
    """(line number, text) of every triple-quoted string that stands as a statement of its own."""
    out = []
    for m in re.finditer(r'^[ \t]*(\"\"\"|\'\'\')(.*?)\1', text, re.S | re.M):
        line = text.count("\n", 0, m.start()) + 1
        out += [(line + i, part) for i, part in enumerate(m.group(2).split("\n"))]
    return out


def comments(root, path, how):
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        text = f.read()
    if how == "c":
        return c_comments(text)
    shell = how == "hash" and not path.endswith(".py")
    found = line_comments(text, "--" if how == "sql" else "#", shell)
    if path.endswith(".py"):
        found += docstrings(text)
    return [(n, c) for n, c in found if not (n == 1 and c.startswith("!"))]


def cited(path, comment, files, dirs, basenames, tops):
    """The paths one comment line names: [(as written, path, whether it is in the tree)]."""
    here = os.path.dirname(path)
    named = []
    for word in WORD.findall(URL.sub(" ", comment)):
        word = re.sub(r":[0-9]+(-[0-9]+)?$", "", re.sub(r"^\((?!B\))", "", word).rstrip("."))
        if not word or word.startswith(MADE) or word in PLACEHOLDERS:
            continue
        if word.startswith(("./", "../")):
            if not BARE.fullmatch(os.path.basename(word)):
                continue  # ../dir: a relative path is read when it names a file
            target = os.path.normpath(os.path.join(here, word))
        elif "/" in word and word.split("/")[0] in tops:
            if METHOD.fullmatch(word) and not word.endswith("/"):
                continue  # an MCP method, named like a folder (a folder of ours ends in /)
            target = os.path.normpath(word)
        elif "/" not in word and BARE.fullmatch(word):
            if word not in basenames and PATTERN.search(word):
                continue
            target = word if word in basenames else os.path.join(here, word)  # anywhere will do
            named.append((word, target, word in basenames))
            continue
        else:
            continue
        there = target in files or target in dirs
        if not there and "*" in word and "{" not in word:
            there = any(fnmatch.fnmatchcase(f, target) for f in files)  # a glob: docs/*.md
        elif not there and PATTERN.search(word):
            continue  # a pattern (NNNN_name.sql, tests/NAME/suite.sh) that names no one file
        named.append((word, target, there))
    return named


def ignored(root, paths):
    """The paths git ignores (what a build or a run writes: node_modules/, docker/secrets/)."""
    if not paths:
        return set()
    inside = [p + "/x" for p in paths]  # a folder's pattern (docker/secrets/) holds what is in it
    out = subprocess.run(["git", "-C", root, "check-ignore", "--no-index", "--stdin"],
                         input="\n".join(paths + inside), capture_output=True, text=True).stdout
    return {p[:-2] if p.endswith("/x") else p for p in out.split("\n")}


def retired(root, files):
    """Lines of the tree's text files that say a retired phrase."""
    out = []
    for path in sorted(f for f in files if not f.startswith(RETIRED_HISTORY)):
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except (UnicodeDecodeError, OSError):
            continue  # not text
        for phrase, now in RETIRED:
            out += ["%s:%d: says \"%s\", which is gone: %s" % (path, n, m.group(0), now)
                    for n, line in enumerate(lines, 1)
                    for m in [re.search(phrase, line, re.I)] if m]
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="repository root (default: ..)")
    root = os.path.abspath(ap.parse_args().root)
    files, dirs = tree(root)
    basenames = {os.path.basename(f) for f in files}
    tops = {f.split("/")[0] for f in files}
    found, read, paths = [], 0, 0
    for path in sorted(files):
        how = None if path.startswith(SKIPPED) else kind(root, path)
        if how is None:
            continue
        read += 1
        for n, comment in comments(root, path, how):
            named = cited(path, comment, files, dirs, basenames, tops)
            paths += len(named)
            found += [(path, n, word, target) for word, target, there in named if not there]
    made = ignored(root, sorted({target for _, _, _, target in found}))
    findings = ["%s:%d: cites %s, which does not exist (name what is there, or drop it)"
                % (path, n, word) for path, n, word, target in found if target not in made]
    said = retired(root, files)
    for line in findings + said:
        print(line)
    print("stale: %d files' comments read, %d paths cited, %d that do not exist; %d retired "
          "phrases said" % (read, paths, len(findings), len(said)))
    return 1 if findings or said else 0


if __name__ == "__main__":
    sys.exit(main())
