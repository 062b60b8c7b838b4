#!/usr/bin/env python3
"""Check every capability declaration (server/capabilities/NAME.json) against the database it
runs on: its SQL function's arguments and result as pg_proc states them (a read's RETURNS TABLE
by name, type and order; a write's call and answer, whose result the server checks against the
declared columns on every call), that a read function is one PostgreSQL inlines into the
server's statement (plain SQL, STABLE, no SET clause, not SECURITY DEFINER, not STRICT), and its
row of fleet.capabilities (the roles, scope, people_only and confirmation that
`bikaroo-mcp migrate` copies from the declarations). One line per declaration, `ok - ...` or
`not ok - ...` naming the declaration, what differs and what to change.
Usage: declcheck.py SUPERUSER_URL [DECLARATION.json...] (default: every declaration)."""
import glob
import json
import os
import subprocess
import sys

READ_ARGS = {True: ["text[]"], False: []}
WRITE_ARGS = ["fleet.write_call"]
WRITE_RESULT = "fleet.write_answer"


def psql(url, sql):
    out = subprocess.run(["psql", "-X", "-At", "-F", "\t", url, "-c", sql], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def signature(url, function):
    """(([(mode, name, type)] of every argument of function, what keeps PostgreSQL from
    inlining it ([] when nothing does)), 1, the type it returns), or (None, how many there are,
    None) when there is none or more than one."""
    schema, name = function.split(".", 1)
    rows = psql(url, f"""
        SELECT format_type(p.prorettype, NULL),
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
        return None, len(rows), None
    returns, modes, names, types, blocks = rows[0]
    types = types.split(",") if types else []
    names = names.split(",") if names else [""] * len(types)
    modes = modes.split(",") if modes else ["i"] * len(types)
    return (list(zip(modes, names, types)), blocks.split(";") if blocks else []), 1, returns


JSON_OF = {"text": str, "smallint": int, "integer": int, "bigint": int, "boolean": bool}


def write_results(url, decl):
    """What each tool of a write answers to its example, confirmed, in a transaction rolled back
    (its fixture first, then the call as the login role): the result's keys and values against
    the declared columns. The server checks every answer the same way (declared.c)."""
    fn, cols = decl["write"]["function"], {c["column"]: c for c in decl["write"]["columns"]}
    problems = []
    for tool in decl.get("tools", []):
        ex = tool["example"]
        call = "(%s, %s, %s::jsonb, %s, NULL, repeat('0', 64), 'declcheck', true, NULL, NULL, " \
               "NULL, NULL)::fleet.write_call" % tuple(
                   "'" + v.replace("'", "''") + "'" for v in
                   (ex["caller"]["subject"], ex["caller"]["client"], json.dumps(ex["arguments"]),
                    tool["name"]))
        out = subprocess.run(
            ["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", url],
            input=f"BEGIN;\n{ex.get('fixture') or ''};\nSET LOCAL ROLE fleet_app;\n"
                  f"SELECT outcome || ' ' || coalesce(result::text, 'null') FROM {fn}({call});\n"
                  f"ROLLBACK;\n", capture_output=True, text=True)
        line = next((x for x in out.stdout.splitlines() if x.startswith(("ok ", "replayed "))),
                    None)
        if out.returncode != 0 or line is None:
            problems.append(f"{tool['name']}'s example did not succeed as its caller: "
                            f"{(out.stdout + out.stderr).strip()[-300:]}")
            continue
        result = json.loads(line.split(" ", 1)[1])
        for key, value in result.items():
            col = cols.get(key)
            if col is None:
                problems.append(f"{fn} answers {tool['name']} with column {key}, which "
                                f"write.columns does not list: add it (\"withheld\" if it is "
                                f"not shown) or drop it from the function's result")
            elif value is None and not col.get("null") and "withheld" not in col:
                problems.append(f"{fn} answers {tool['name']} with {key} null, which its "
                                f"column does not allow: say \"null\": true, or fix the function")
            elif value is not None and not isinstance(value, JSON_OF.get(col["type"], object)):
                problems.append(f"{fn} answers {tool['name']} with {key} {json.dumps(value)}, "
                                f"not the {col['type']} write.columns says")
        problems += [f"{fn} answers {tool['name']} without column {c}, which write.columns "
                     f"lists: make its result say it, or drop it from the declaration"
                     for c in cols if c not in result and not cols[c].get("null")
                     and not cols[c].get("optional")]
    return problems


def check(url, path, rows_of_table):
    name = os.path.basename(path)[:-5]
    decl = json.load(open(path))
    kind = "read" if "read" in decl else "write" if "write" in decl else None
    if kind is None:
        return []
    part = decl[kind]
    fn = part["function"]
    problems = []
    found, count, returns = signature(url, fn)
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
    if kind == "write" and returns != WRITE_RESULT:
        problems.append(f"{path}: {fn} returns {returns}, a write returns {WRITE_RESULT} "
                        f"(migrations/README.md)")
    out = [(n, t) for m, n, t in sig if m == "t"]
    want = [] if kind == "write" else [(c["column"], c["type"]) for c in part["columns"]]
    for i in range(max(len(out), len(want))):
        have = out[i] if i < len(out) else None
        need = want[i] if i < len(want) else None
        if have == need:
            continue
        where = f"{kind}.columns[{i}]"
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
    if kind == "write" and not problems:
        problems += [f"{path}: {p}" for p in write_results(url, decl)]
    for cap, want_row in capability_rows(name, decl, kind):
        row = rows_of_table.get(cap)
        if row is None:
            problems.append(f"{path}: fleet.capabilities has no row {cap}: run `bikaroo-mcp "
                            f"migrate` (it copies every declaration's roles there)")
        elif row != want_row:
            problems.append(f"{path}: fleet.capabilities says {row} for {cap}, the "
                            f"declaration {want_row}: run `bikaroo-mcp migrate`")
    return problems


def capability_rows(name, decl, kind):
    """The rows of fleet.capabilities a declaration makes (scripts/capgen.c): one per tool with
    roles of its own, named after it; one for the declaration when a row uses its roles."""
    people = "t" if decl.get("people_only") else "f"
    shared = decl.get("write", {}).get("confirmation", {}).get("policy", "never")
    rows = [(t["name"], [",".join(t["roles"]), decl["scope"], people,
                         t.get("write", {}).get("confirmation", {}).get("policy", shared)])
            for t in decl.get("tools", []) if "roles" in t]
    if any("roles" not in r for table in ("tools", "resources", "templates", "prompts")
           for r in decl.get(table, [])):
        rows.append((name, [",".join(decl["roles"]), decl["scope"], people,
                            shared if kind == "write" else "never"]))
    return rows


def workflow(url, decls):
    """The case workflow named alike everywhere: the states of the step table (fleet.case_steps:
    every step's from and to), of the CHECK on fleet.cases.state and of every declared column
    state's enum; every step's event among the CHECK on fleet.case_events.kind; and each step
    tool's branching argument's enum, the step table's branches of that tool. Problems, each
    naming both places."""
    import re
    rows = psql(url, "SELECT tool, coalesce(argument, ''), coalesce(branch, ''), step_from, "
                     "step_to, event FROM fleet.case_steps()")
    checks = {c: set(re.findall(r"'([a-z_]+)'::text", d)) for c, d in psql(
        url, "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conname IN "
             "('cases_state_check', 'case_events_kind_check')")}
    steps = {s for r in rows for s in (r[3], r[4])}
    problems = []
    if steps != checks.get("cases_state_check"):
        problems.append(f"fleet.case_steps() names the states {sorted(steps)}, the CHECK "
                        f"cases_state_check {sorted(checks.get('cases_state_check', []))}: "
                        f"make them one list (a new numbered migration replaces the CHECK)")
    for event in sorted({r[5] for r in rows} - checks.get("case_events_kind_check", set())):
        problems.append(f"fleet.case_steps() records the event {event}, which the CHECK "
                        f"case_events_kind_check does not admit: add it in a numbered migration")
    for path, decl in decls:
        for part in ("read", "write"):
            for col in decl.get(part, {}).get("columns", []):
                enum = col.get("schema", {}).get("enum")
                if col["column"] == "state" and enum is not None and set(enum) != steps:
                    problems.append(f"{path}: {part}.columns state's enum says {enum}, the "
                                    f"step table {sorted(steps)}: make them the same")
        for tool in decl.get("tools", []):
            for arg in {r[1] for r in rows if r[0] == tool["name"] and r[1]}:
                enum = tool["input"].get("properties", {}).get(arg, {}).get("enum")
                branches = {r[2] for r in rows if r[0] == tool["name"]}
                if enum is None or set(enum) != branches:
                    problems.append(f"{path}: {tool['name']}'s argument {arg} takes {enum}, "
                                    f"its steps in fleet.case_steps() {sorted(branches)}: "
                                    f"make them the same")
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
    problems = workflow(url, [(p, json.load(open(p))) for p in paths])
    if problems:
        bad += 1
        print("not ok - the case workflow's states, events and steps, as the step table, the "
              "CHECKs and the declarations name them")
        for p in problems:
            print(f"#   {p}")
    else:
        print("ok - the case workflow's states, events and steps are the same in the step table, "
              "the CHECKs and the declarations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
