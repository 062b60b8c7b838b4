#!/usr/bin/env python3
"""The texts that tell people and assistants how a case is worked hold to what the server does:
the staff procedure (resources/damaged-bike.md), the prompt that walks an assistant through it
(prompts/investigate-damaged-bike.md) and the host developers' page (docs/cases.md), against the
declarations (server/capabilities/*.json) and the database (fleet.case_steps(), the status codes,
the case events).

`casetexts.py DB_URL [FILE...]` (default: those three; psql reads the database) prints one
`ok - ...` / `not ok - ...` line per file, each problem on a line of its own, and exits 1 on any:

- every name a text gives is one the product has: a snake_case or camelCase word (in backticks
  in the docs page, anywhere in the procedure and the prompt) is a word of the declarations (a
  tool, an argument, an answer's field, a value, a role), a status code, a case event or a step
  of the workflow, or a word of the MCP specification; a bikaroo:// URI is a declared resource or
  template;
- every text names each tool that takes a step of the workflow (fleet.case_steps), the report
  that opens a case, the bike's status and the work queues (list_cases);
- every text shows the queue each person works from, as the arguments list_cases's description
  gives them (a technician's {"waitingForMe": true}, ...; a value that names a bike or a region
  may be any, a prompt's {{placeholder}} too), and every list_cases argument set a text shows is
  one the tool's input schema takes;
- a steps table (its header starts `| step of the case |`) has one row per step of the case, in
  the workflow's order, and in each: the tool that takes the case from that step
  (fleet.case_steps; `nothing` once closed), the values its required arguments choose among (all
  of them, none other), the people who may take it (its declared roles, in words), the steps that follow
  and, in a `scope` column, the tool's declared scope."""
import glob
import json
import re
import subprocess
import sys

TEXTS = ["resources/damaged-bike.md", "prompts/investigate-damaged-bike.md", "docs/cases.md"]
# Texts whose every word is checked (by file name); elsewhere only the words in backticks.
EVERY_WORD = {"damaged-bike.md", "investigate-damaged-bike.md"}
PROMPT = "investigate-damaged-bike.md"  # prose for an assistant: no steps table
# The words of the MCP specification (and OAuth's) a host developer's page may name.
PROTOCOL = {"resultType", "taskId", "statusMessage", "pollIntervalMs", "ttlMs", "isError",
            "structuredContent", "inputResponses", "requestState", "inputRequests",
            "input_required", "insufficient_scope"}
# The people a text names, as the roles they hold (fleet.principals.role).
ROLE_WORDS = {"customer-care agent": "customer_care", "fleet operator": "fleet_operator",
              "technician": "technician", "viewer": "viewer"}
STATES = ["open", "inspection_requested", "inspected", "awaiting_approval", "closed"]
NAME = re.compile(r"\b(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]*)+)\b")
URI = re.compile(r"bikaroo://[A-Za-z0-9_./{}-]*[A-Za-z0-9_/{}-]")
TICKED = re.compile(r"`([^`]+)`")
QUEUE_TOOL = "list_cases"
# A JSON object written inline ({"waitingForMe": true}); a prompt's placeholder ({{bikeId}}), and
# how it stands inside such an object while it is read.
INLINE = re.compile(r'\{"[^{}]*\}')
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
FILLED = re.compile(r"<<\w+>>")


def psql(url, sql):
    out = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines() if line]


def strings(node):
    """Every string of a JSON value, keys included."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)
    elif isinstance(node, str):
        yield node


def product(url):
    decls = {p: json.load(open(p)) for p in sorted(glob.glob("server/capabilities/*.json"))
             if not p.endswith(".schema.json")}
    known, uris, tools = set(), set(), {}
    queues = None
    for d in decls.values():
        for s in strings(d):
            known.update(re.findall(r"[A-Za-z][A-Za-z0-9_]*", s))
        for r in d.get("resources", []):
            uris.add(r["uri"])
        for r in d.get("templates", []):
            uris.add(r["uri_template"])
        for t in d.get("tools", []):
            props = t["input"].get("properties", {})
            # The values a step chooses among: those of its required arguments' enums.
            choices = {v for k in t["input"].get("required", [])
                       for v in props.get(k, {}).get("enum", [])}
            tools[t["name"]] = {"roles": set(t.get("roles", d.get("roles", []))),
                                "scope": d["scope"], "input": props,
                                "choices": choices}
            if t["name"] == QUEUE_TOOL:
                # The queues people work from, as the tool's description shows them.
                queues = [json.loads(m) for m in INLINE.findall(t["description"])]
    known.update(c for (c,) in psql(url, "SELECT code FROM fleet.status_codes"))
    for (check,) in psql(url, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE "
                              "conrelid = 'fleet.case_events'::regclass AND contype = 'c'"):
        known.update(re.findall(r"'([a-z_]+)'", check))
    steps = psql(url, "SELECT tool, coalesce(branch, ''), step_from, step_to, event "
                      "FROM fleet.case_steps()")
    for tool, branch, a, b, event in steps:
        known.update([tool, a, b, event] + ([branch] if branch else []))
    if not queues:
        sys.exit("casetexts.py: %s's description shows no queue ({\"waitingForMe\": true}, ...)"
                 % QUEUE_TOOL)
    tools[QUEUE_TOOL]["queues"] = queues
    return known | PROTOCOL, uris, tools, steps


def argument_problem(props, key, value):
    """Why the tool's input schema refuses value for key (None when it takes it)."""
    schema = props.get(key)
    if schema is None:
        return "%s has no argument %s" % (QUEUE_TOOL, key)
    if isinstance(value, str) and FILLED.fullmatch(value):
        return None  # the prompt's argument, checked when the prompt is asked
    want = {"boolean": bool, "string": str}.get(schema.get("type"))
    if want and not isinstance(value, want):
        return "%s must be a %s" % (key, schema["type"])
    if "enum" in schema and value not in schema["enum"]:
        return "%s is one of %s" % (key, ", ".join(schema["enum"]))
    if "pattern" in schema and not re.search(schema["pattern"], value):
        return "%s must match %s" % (key, schema["pattern"])
    return None


def check_queues(text, tools):
    """The problems of the list_cases argument sets text shows, and the queues it leaves out."""
    props = tools[QUEUE_TOOL]["input"]
    # The arguments no other tool takes: an object naming one is meant for list_cases.
    own = set(props) - {k for name, t in tools.items() if name != QUEUE_TOOL for k in t["input"]}
    bad, shown = [], []
    for m in INLINE.finditer(PLACEHOLDER.sub(r"<<\1>>", text)):
        try:
            args = json.loads(m.group(0))
        except ValueError:
            continue
        if not args or not (set(args) <= set(props) or set(args) & own):
            continue
        why = [w for k, v in args.items() for w in [argument_problem(props, k, v)] if w]
        if why:
            bad.append("shows %s, which %s refuses: %s" % (m.group(0), QUEUE_TOOL, "; ".join(why)))
        shown.append(args)

    def same(queue, args):
        # A value naming a bike or a region (a pattern) may be any: it is an example.
        return set(queue) == set(args) and all(
            "pattern" in props[k] or queue[k] == args[k] for k in queue)
    for q in tools[QUEUE_TOOL]["queues"]:
        if not any(same(q, a) for a in shown):
            bad.append("does not show the queue %s (%s)" % (json.dumps(q), QUEUE_TOOL))
    return bad


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def check_table(lines, tools, steps):
    """The problems of the steps table in lines (None when there is none)."""
    head = next((i for i, l in enumerate(lines) if l.startswith("| step of the case |")), None)
    if head is None:
        return None
    cols = cells(lines[head])
    rows = []
    for line in lines[head + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(cols, cells(line))))
    bad = []
    named = [TICKED.findall(r.get("step of the case", ""))[:1] for r in rows]
    if [n[0] if n else "" for n in named] != STATES:
        bad.append("the table's steps are %s, the workflow's %s"
                   % ([n[0] if n else "" for n in named], STATES))
    for r, n in zip(rows, named):
        state = n[0] if n else "?"
        ticked = TICKED.findall(r.get("with", ""))
        mine = [s for s in steps if s[2] == state]
        want_tool = mine[0][0] if mine else None
        tool = ticked[0] if ticked else None
        if tool != want_tool:
            bad.append("%s: the step is taken with %s, the workflow says %s"
                       % (state, tool or "nothing", want_tool or "nothing"))
            continue
        if not tool:
            continue
        spec = tools[tool]
        values = set(ticked[1:]) - set(spec["input"])
        if values != spec["choices"]:
            bad.append("%s: %s chooses among %s, the table says %s"
                       % (state, tool, sorted(spec["choices"]), sorted(values)))
        who = {role for words, role in ROLE_WORDS.items()
               if words in r.get("who takes the next step", "")}
        if who != spec["roles"]:
            bad.append("%s: %s is for %s, the table says %s"
                       % (state, tool, sorted(spec["roles"]), sorted(who)))
        follows = {w for w in TICKED.findall(r.get("what follows", "")) if w in STATES}
        want = {s[3] for s in mine}
        if follows != want:
            bad.append("%s: %s leads to %s, the table says %s"
                       % (state, tool, sorted(want), sorted(follows)))
        if "scope" in r and TICKED.findall(r["scope"]) != [spec["scope"]]:
            bad.append("%s: %s needs %s, the table says %s"
                       % (state, tool, spec["scope"], r["scope"]))
    return bad


def check_file(path, known, uris, tools, steps):
    text = open(path, encoding="utf-8").read()
    bad = []
    base = path.rsplit("/", 1)[-1]
    words = NAME.findall(text) if base in EVERY_WORD else \
        [w for t in TICKED.findall(text) for w in NAME.findall(t) if not URI.search(t)]
    for w in sorted(set(words) - known):
        bad.append("names %s, which the server has not (no declaration, status, event or step)"
                   % w)
    for u in sorted(set(URI.findall(text)) - uris):
        bad.append("names %s, which is no declared resource or template" % u)
    need = sorted({s[0] for s in steps} | {"report_damaged_bike", "get_bike_status", QUEUE_TOOL})
    for t in need:
        if not re.search(r"\b%s\b" % t, text):
            bad.append("does not name %s" % t)
    bad += check_queues(text, tools)
    if base != PROMPT:
        table = check_table(text.split("\n"), tools, steps)
        bad += ["has no steps table (| step of the case | ...)"] if table is None else table
    return bad


def main(argv):
    if len(argv) < 2:
        sys.exit("usage: casetexts.py DB_URL [FILE...]")
    known, uris, tools, steps = product(argv[1])
    failures = 0
    for path in argv[2:] or TEXTS:
        bad = check_file(path, known, uris, tools, steps)
        failures += bool(bad)
        print(("not ok - " if bad else "ok - ") + path +
              " names the workflow's steps, tools, fields and people as the server has them")
        for b in bad:
            print("#   %s: %s" % (path, b))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
