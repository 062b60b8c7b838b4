#!/usr/bin/env python3
"""The governance table of docs/capabilities.md is generated: the build writes it from the
declarations (build/gen/capabilities.md, scripts/schema_embed.c). `doctable.py write GEN DOC`
puts it in place of the table DOC holds (the lines from the header `| kind | name | version |`
to the last line starting with `|`); `doctable.py check GEN DOC` exits 1, naming both, when they
differ. make docs-tables writes; the declared suite checks."""
import sys


def table_span(lines):
    head = next(i for i, l in enumerate(lines)
                if l.replace(" ", "").startswith("|kind|name|version|"))
    end = head
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return head, end


def main():
    mode, gen, doc = sys.argv[1:4]
    table = open(gen).read().rstrip("\n").split("\n")
    lines = open(doc).read().split("\n")
    head, end = table_span(lines)
    if mode == "check":
        if lines[head:end] == table:
            return 0
        print(f"{doc}: its capability table is not the one the declarations make ({gen}): "
              f"run `make docs-tables`", file=sys.stderr)
        return 1
    lines[head:end] = table
    open(doc, "w").write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
