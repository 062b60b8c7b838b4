#!/usr/bin/env python3
"""The docs' tables of capabilities are generated from the declarations
(server/capabilities/NAME.json), each row in the order of the declarations' names:
- the governance table (docs/capabilities.md): one line per row (tool, resource, template,
  prompt), its governance record's version, risk, owner, roles, confirmation and lifecycle;
- the "What it serves" table (README.md, docs/capabilities.md): one line per row grouped by kind
  (tool, resource, template, prompt, view), its name with its arguments (`{a, b?}`, an optional
  one marked), the first sentence of its description, its scope and roles (and whether only
  people acting in person may use it).
A table's header line names it in a doc (the lines from that header to the last line starting
with `|`). `doctable.py write DOC...` puts every table a DOC holds in place; `doctable.py check
DOC...` exits 1, naming the doc and the table, when one differs or a DOC holds none. make
docs-tables writes; the declared suite checks."""
import glob
import json
import os
import sys

GOVERNANCE = ["| kind | name | version | risk | owner | roles | confirmation | lifecycle |",
              "|---|---|---|---|---|---|---|---|"]
SERVES = ["| kind | name | what for | scope | roles |", "|---|---|---|---|---|"]
ROWS = [("tools", "tool", "name"), ("resources", "resource", "uri"),
        ("templates", "template", "uri_template"), ("prompts", "prompt", "name")]
VIEW_MIME = "text/html;profile=mcp-app"  # an MCP Apps view (ui_views.json)
FOLDER = os.path.join(os.path.dirname(__file__), "..", "server", "capabilities")


def declarations():
    """(declaration, table, kind, name key, row) of every row, in the files' order."""
    for path in sorted(glob.glob(os.path.join(FOLDER, "*.json"))):
        if path.endswith(".schema.json"):
            continue
        decl = json.load(open(path, encoding="utf-8"))
        for table, kind, name in ROWS:
            for row in decl.get(table, []):
                yield decl, kind, row[name], row


def roles(decl, row):
    return ", ".join(row.get("roles", decl.get("roles", [])))


def governance_table():
    lines = list(GOVERNANCE)
    schema = json.load(open(os.path.join(FOLDER, "declaration.schema.json"), encoding="utf-8"))
    default = {k: v.get("default") for k, v in schema["$defs"]["governance"]["properties"].items()}
    for decl, kind, name, row in declarations():
        g = dict(default, **row["governance"])
        life = g["lifecycle"]
        if life == "deprecated":
            life = f"deprecated (sunset {g.get('sunset')}, use {g.get('replacement')})"
        lines.append(f"| {kind} | `{name}` | {g['version']} | {g['risk']} | {g['owner']} | "
                     f"{roles(decl, row)} | {g['confirmation']} | {life} |")
    return lines


def sentence(text):
    """text's first sentence: up to and with the first ". " ("e.g. " and "i.e. " end none)."""
    at = text.find(". ")
    while at >= 0 and at >= 3 and text[at - 3:at] in ("e.g", "i.e"):
        at = text.find(". ", at + 1)
    return text if at < 0 else text[:at + 1]


def serves_table():
    kinds = ["tool", "resource", "template", "prompt", "view"]
    groups = {k: [] for k in kinds}
    for decl, kind, name, row in declarations():
        if kind == "tool":
            schema = row.get("input", {})
            args = [(a, a in schema.get("required", [])) for a in schema.get("properties", {})]
        else:
            args = [(a["name"], a.get("required", False)) for a in row.get("arguments", [])]
        if kind == "resource" and row.get("mime_type") == VIEW_MIME:
            kind = "view"
        shown = f"`{name}`"
        if args:
            shown += " `{" + ", ".join(a + ("" if req else "?") for a, req in args) + "}`"
        what = sentence(row.get("description", "")).replace("|", "\\|").replace("\n", " ")
        people = "; people in person only" if decl.get("people_only") else ""
        groups[kind].append(f"| {kind} | {shown} | {what} | `{decl['scope']}` | "
                            f"{roles(decl, row)}{people} |")
    return SERVES + [line for k in kinds for line in groups[k]]


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
    if len(sys.argv) < 3 or sys.argv[1] not in ("write", "check"):
        sys.exit("usage: doctable.py write|check DOC...")
    mode, docs = sys.argv[1], sys.argv[2:]
    tables = [governance_table(), serves_table()]
    bad = 0
    for doc in docs:
        lines = open(doc, encoding="utf-8").read().split("\n")
        found = 0
        for table in tables:
            span = table_span(lines, table[0])
            if span is None:
                continue
            found += 1
            head, end = span
            if mode == "check" and lines[head:end] != table:
                print(f"{doc}: its table `{table[0]}` is not the one the declarations make: "
                      f"run `make docs-tables`", file=sys.stderr)
                bad = 1
            lines[head:end] = table
        if not found:
            print(f"{doc}: holds none of the tables the declarations make ({GOVERNANCE[0]} or "
                  f"{SERVES[0]}): put one where it goes, then run `make docs-tables`",
                  file=sys.stderr)
            bad = 1
        elif mode == "write":
            open(doc, "w", encoding="utf-8").write("\n".join(lines))
    return bad


if __name__ == "__main__":
    sys.exit(main())
