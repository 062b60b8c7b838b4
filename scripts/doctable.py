#!/usr/bin/env python3
"""The docs' tables of capabilities are generated: the build writes them from the declarations
(scripts/schema_embed.c): build/gen/capabilities.md, the governance table of
docs/capabilities.md, and build/gen/serves.md, the "What it serves" table of README.md and
docs/capabilities.md. A generated table's header line names the table it replaces in a doc (the
lines from that header to the last line starting with `|`). `doctable.py write GEN DOC...` puts
it in place in each DOC; `doctable.py check GEN DOC...` exits 1, naming the doc and GEN, when a
DOC's table differs or is missing. make docs-tables writes; the declared suite checks."""
import sys


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def table_span(lines, header):
    """The [start, end) lines of the table whose header has the cells of header, or None."""
    want = cells(header)
    head = next((i for i, l in enumerate(lines)
                 if l.lstrip().startswith("|") and cells(l) == want), None)
    if head is None:
        return None
    end = head
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return head, end


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("write", "check"):
        sys.exit("usage: doctable.py write|check GEN DOC...")
    mode, gen, docs = sys.argv[1], sys.argv[2], sys.argv[3:]
    table = open(gen, encoding="utf-8").read().rstrip("\n").split("\n")
    bad = 0
    for doc in docs:
        lines = open(doc, encoding="utf-8").read().split("\n")
        span = table_span(lines, table[0])
        if span is None:
            print(f"{doc}: no table with the header {table[0]} (the one {gen} holds): put it "
                  f"where the table goes, then run `make docs-tables`", file=sys.stderr)
            bad = 1
            continue
        head, end = span
        if mode == "check":
            if lines[head:end] != table:
                print(f"{doc}: its table `{table[0]}` is not the one the declarations make "
                      f"({gen}): run `make docs-tables`", file=sys.stderr)
                bad = 1
            continue
        lines[head:end] = table
        open(doc, "w", encoding="utf-8").write("\n".join(lines))
    return bad


if __name__ == "__main__":
    sys.exit(main())
