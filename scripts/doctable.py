#!/usr/bin/env python3
"""The governance table of docs/capabilities.md is generated from the declarations
(server/capabilities/NAME.json): one line per row (tool, resource, template, prompt), in the
order of the declarations' names, its governance record's version, risk, owner, roles,
confirmation and lifecycle. `doctable.py write DOC` puts it in place of the table DOC holds (the
lines from the header `| kind | name | version |` to the last line starting with `|`);
`doctable.py check DOC` exits 1, saying so, when they differ. make docs-tables writes; the
declared suite checks."""
import glob
import json
import os
import sys

HEADER = ["| kind | name | version | risk | owner | roles | confirmation | lifecycle |",
          "|---|---|---|---|---|---|---|---|"]
ROWS = [("tools", "tool", "name"), ("resources", "resource", "uri"),
        ("templates", "template", "uri_template"), ("prompts", "prompt", "name")]


def governance_table(folder):
    lines = list(HEADER)
    schema = json.load(open(os.path.join(folder, "declaration.schema.json"), encoding="utf-8"))
    default = {k: v.get("default") for k, v in schema["$defs"]["governance"]["properties"].items()}
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        if path.endswith(".schema.json"):
            continue
        decl = json.load(open(path, encoding="utf-8"))
        for table, kind, name in ROWS:
            for row in decl.get(table, []):
                g = dict(default, **{k: v for k, v in row["governance"].items()})
                life = g["lifecycle"]
                if life == "deprecated":
                    life = f"deprecated (sunset {g.get('sunset')}, use {g.get('replacement')})"
                roles = ", ".join(row.get("roles", decl.get("roles", [])))
                lines.append(f"| {kind} | `{row[name]}` | {g['version']} | {g['risk']} | "
                             f"{g['owner']} | {roles} | "
                             f"{g['confirmation']} | {life} |")
    return lines


def table_span(lines):
    head = next(i for i, l in enumerate(lines)
                if l.replace(" ", "").startswith("|kind|name|version|"))
    end = head
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return head, end


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit("usage: doctable.py write|check DOC")
    mode, doc = sys.argv[1:3]
    table = governance_table(os.path.join(os.path.dirname(__file__), "..", "server",
                                          "capabilities"))
    lines = open(doc, encoding="utf-8").read().split("\n")
    head, end = table_span(lines)
    if mode == "check":
        if lines[head:end] == table:
            return 0
        print(f"{doc}: its capability table is not the one the declarations make: run "
              f"`make docs-tables`", file=sys.stderr)
        return 1
    lines[head:end] = table
    open(doc, "w", encoding="utf-8").write("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
