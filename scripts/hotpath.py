#!/usr/bin/env python3
"""The lines of the hot path: the code a get_bike_status call runs between its parsed request
and its rows, and the SQL its statements run (bench/README.md, "The hot path's code", says why
each file is in and why the others are not). Whole files are counted, comments and blank lines
included: a reader of the path reads them all, and code of a file that the path does not run
still costs its reader. Fails when a file of the list is gone, so that the list stays true.

Usage: scripts/hotpath.py          each file, its lines and its lines of code, and the totals
       scripts/hotpath.py --total  the total alone (bench/run.sh)
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# (file, why it is on the path), in the order a call goes through them.
FILES = [
    ("common/loop.c", "the event loop the call, its connection and its database sockets live on"),
    ("common/loop.h", ""),
    ("common/task.c", "the call's task: it parks while its read is in the database"),
    ("common/task.h", ""),
    ("domain/reads.c", "the read: queued, batched per caller, its statement made, its rows mapped and checked"),
    ("domain/reads.h", ""),
    ("domain/pg/exec.c", "the executor: the batch as one unit on a pipelined connection"),
    ("domain/pg/exec.h", ""),
    ("domain/pg/conn.c", "what every connection shares: settings, a statement's deadline, the hold, errors, prepared names"),
    ("domain/pg/conn.h", ""),
    ("migrations/functions/fleet.act_as.sql", "the identity and rights, once per caller and unit"),
    ("migrations/functions/fleet.current_subject.sql", "the identity echoed, and the policies"),
    ("migrations/functions/fleet.current_client.sql", ""),
    ("migrations/functions/fleet.current_regions.sql", "the perimeter, in the policies"),
    ("migrations/functions/fleet.may_read.sql", "who may use the capability, once per caller"),
    ("migrations/functions/fleet.bike_status_for.sql", "the read itself, inlined"),
    ("migrations/functions/fleet.audit_reads.sql", "the calls' audit rows, one INSERT"),
]


def code_lines(path, text):
    """Lines with something besides comments and blanks."""
    if path.endswith(".sql"):
        text = re.sub(r"--[^\n]*", "", text)
    else:
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
    return sum(1 for line in text.split("\n") if line.strip())


def main():
    total = code = 0
    rows = []
    for path, why in FILES:
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full):
            sys.exit(f"hotpath: {path} is gone: update the list in scripts/hotpath.py")
        with open(full, encoding="utf-8") as f:
            text = f.read()
        n = text.count("\n")
        c = code_lines(path, text)
        total += n
        code += c
        rows.append((n, c, path, why))
    if sys.argv[1:] == ["--total"]:
        print(total)
        return
    for n, c, path, why in rows:
        print(f"{n:6} {c:6}  {path}{'  (' + why + ')' if why else ''}")
    print(f"{total:6} {code:6}  lines of the hot path (the second column: without comments and blank lines)")


main()
