#!/usr/bin/env python3
"""Check every capability declaration (server/capabilities/NAME.json) against the database it
runs on: its SQL function's arguments and RETURNS TABLE (name, type, order) as pg_proc states
them, that a read function is one PostgreSQL inlines into the server's statement (plain SQL,
STABLE, no SET clause, not SECURITY DEFINER, not STRICT), and its row of fleet.capabilities (the
roles, scope, people_only and confirmation that `bikaroo-mcp migrate` copies from the
declarations). One line per declaration, `ok - ...` or
`not ok - ...` naming the declaration, what differs and what to change.
Usage: declcheck.py SUPERUSER_URL [DECLARATION.json...] (default: every declaration)."""
import glob
import json
import os
import subprocess
import sys

READ_ARGS = {True: ["text[]"], False: []}
WRITE_ARGS = ["text", "text", "jsonb", "text", "text", "text", "text", "boolean"]
WRITE_FIXED = [("role", "text"), ("regions", "text[]"), ("is_human", "boolean"),
               ("client_may_read", "boolean"), ("client_may_report", "boolean"),
               ("requires_confirmation", "boolean"), ("outcome", "text"), ("region", "text"),
               ("effect", "text")]


def psql(url, sql):
    out = subprocess.run(["psql", "-X", "-At", "-F", "\t", url, "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def signature(url, function):
    """([(mode, name, type)] of every argument of function, what keeps PostgreSQL from inlining
    it ([] when nothing does)), or (None, how many there are) when there is none or more than
    one."""
    schema, name = function.split(".", 1)
    rows = psql(url, f"""
        SELECT p.oid,
               coalesce(array_to_string(p.proargmodes, ','), ''),
               coalesce(array_to_string(p.proargnames, ','), ''),
               (SELECT string_agg(format_type(t, NULL), ',' ORDER BY o)
                  FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]))
                       WITH ORDINALITY AS x(t, o)),
               concat_ws(';',
                         CASE WHEN l.lanname <> 'sql' THEN 'LANGUAGE ' || l.lanname END,
                         CASE WHEN p.provolatile = 'v' THEN 'VOLATILE' END,
                         CASE WHEN p.prosecdef THEN 'SECURITY DEFINER' END,
                         CASE WHEN p.proconfig IS NOT NULL THEN
                              'SET ' || array_to_string(p.proconfig, ' SET ') END,
                         CASE WHEN p.proisstrict THEN 'STRICT' END,
                         CASE WHEN NOT p.proretset THEN 'not RETURNS TABLE' END)
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          JOIN pg_language l ON l.oid = p.prolang
         WHERE n.nspname = '{schema}' AND p.proname = '{name}'""")
    if len(rows) != 1:
        return None, len(rows)
    _, modes, names, types, blocks = rows[0]
    types = types.split(",") if types else []
    names = names.split(",") if names else [""] * len(types)
    modes = modes.split(",") if modes else ["i"] * len(types)
    return (list(zip(modes, names, types)), blocks.split(";") if blocks else []), 1


def check(url, path, rows_of_table):
    name = os.path.basename(path)[:-5]
    decl = json.load(open(path))
    kind = "read" if "read" in decl else "write" if "write" in decl else None
    if kind is None:
        return []
    part = decl[kind]
    fn = part["function"]
    problems = []
    found, count = signature(url, fn)
    if found is None:
        return [f"{path}: {kind}.function {fn} is {'not' if count == 0 else 'more than once'} "
                f"in the database: create it in migrations/functions/{fn}.sql (one form only) "
                f"and run migrate"]
    sig, blocks = found
    if kind == "read" and blocks:
        problems.append(f"{path}: {fn} is not a read PostgreSQL can inline ({', '.join(blocks)}):"
                        f" make it LANGUAGE sql STABLE, RETURNS TABLE, with no SET clause, not"
                        f" SECURITY DEFINER nor STRICT (migrations/README.md, \"A read"
                        f" function\")")
    args = [t for m, _, t in sig if m in ("i", "b")]
    want_args = READ_ARGS[bool(part.get("key"))] if kind == "read" else WRITE_ARGS
    if args != want_args:
        problems.append(f"{path}: {fn} takes ({', '.join(args)}), a {kind} takes "
                        f"({', '.join(want_args)}): change the function's arguments "
                        f"(migrations/README.md)")
    out = [(n, t) for m, n, t in sig if m == "t"]
    want = ([] if kind == "read" else WRITE_FIXED) + \
        [(c["column"], c["type"]) for c in part["columns"]]
    for i in range(max(len(out), len(want))):
        have = out[i] if i < len(out) else None
        need = want[i] if i < len(want) else None
        if have == need:
            continue
        where = (f"{kind}.columns[{i - (0 if kind == 'read' else len(WRITE_FIXED))}]"
                 if need and i >= (0 if kind == "read" else len(WRITE_FIXED)) else
                 "the fixed columns of a write")
        if need is None:
            problems.append(f"{path}: {fn} returns {have[0]} {have[1]} at position {i + 1}, "
                            f"which the declaration does not list: add it to {kind}.columns "
                            f"(\"withheld\" if it is not shown)")
        elif have is None:
            problems.append(f"{path}: {where} says {need[0]} {need[1]}, and {fn} returns only "
                            f"{len(out)} columns: remove it from the declaration or add it to "
                            f"the function's RETURNS TABLE")
        else:
            problems.append(f"{path}: {where} says {need[0]} {need[1]}, {fn} returns {have[0]} "
                            f"{have[1]} at position {i + 1}: make the declaration and the "
                            f"function's RETURNS TABLE say the same, in the same order")
        break
    row = rows_of_table.get(name)
    want_row = [",".join(decl["roles"]), decl["scope"], "t" if decl.get("people_only") else "f",
                part.get("confirmation", {}).get("policy", "never") if kind == "write"
                else "never"]
    if row is None:
        problems.append(f"{path}: fleet.capabilities has no row {name}: run `bikaroo-mcp "
                        f"migrate` (it copies every declaration's roles there)")
    elif row != want_row:
        problems.append(f"{path}: fleet.capabilities says {row} for {name}, the declaration "
                        f"{want_row}: run `bikaroo-mcp migrate`")
    return problems


def main():
    url = sys.argv[1]
    paths = sys.argv[2:] or sorted(glob.glob("server/capabilities/*.json"))
    table = {}
    for n, roles, scope, people, conf in psql(
            url, "SELECT name, array_to_string(roles, ','), scope, people_only, confirmation "
                 "FROM fleet.capabilities"):
        table[n] = [roles, scope, people, conf]
    bad = 0
    for path in paths:
        problems = check(url, path, table)
        decl = json.load(open(path))
        if "read" not in decl and "write" not in decl:
            continue
        if problems:
            bad += 1
            print(f"not ok - {path} against the database")
            for p in problems:
                print(f"#   {p}")
        else:
            print(f"ok - {path}: its function's arguments and columns, and its roles in "
                  f"fleet.capabilities, are the database's")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
