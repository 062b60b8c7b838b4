#!/usr/bin/env bash
# new-capability.sh NAME read|write|step [ROLE...]: writes a building, passing skeleton of a new
# tool NAME (snake_case) for a developer to fill in, as server/capabilities/README.md says: a read
# (its declaration and SQL function), a write (its declaration, its table's numbered migration
# and its write function) or a step of the case workflow from state FROM to state TO (its tool
# in server/capabilities/case_workflow.json, its row in fleet.case_steps, and the numbered
# migration that admits its case event); each with its own tests and the generated edits: for a
# step, its mention in the texts that teach the steps (STEP_TEXTS, to reword), and for all the
# tables of docs/capabilities.md and README.md (make docs-tables) and its contract in
# tests/contracts/snapshot.json (make contracts, recorded as 0.1.0: in development, its contract
# may change until it is 1.0.0). Nothing else is edited: the build lists it, generates its C, and
# migrate gives its roles to the database. ROLE...: the roles that may use it (default: every role
# for a read, fleet_operator for a write or a step).
# new-capability.sh --plan NAME KIND: the files it writes or edits ("file PATH", NNNN for the next
# number) and what to run then ("run COMMAND"), which the recipe must say (scripts/recipe.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
die() { echo "new-capability: $*" >&2; exit 2; }
# The texts that teach people and assistants the workflow's steps (scripts/casetexts.py's).
STEP_TEXTS=(resources/damaged-bike.md prompts/investigate-damaged-bike.md docs/cases.md)
plan() { # plan NAME KIND
  local files
  case $2 in
  read) files=("server/capabilities/$1.json" "migrations/functions/fleet.$1_for.sql") ;;
  write) files=("server/capabilities/$1.json" "migrations/NNNN_$1.sql" "migrations/functions/fleet.$1_as.sql") ;;
  step) files=(server/capabilities/case_workflow.json "migrations/NNNN_$1.sql" migrations/functions/fleet.case_steps.sql
    "${STEP_TEXTS[@]}") ;;
  *) die "KIND must be read, write or step" ;;
  esac
  printf 'file %s\n' "${files[@]}" "tests/integration/test_$1.c" "tests/e2e/$1.test.mjs" \
    docs/capabilities.md README.md tests/contracts/snapshot.json
  printf 'run %s\n' "make docs-tables contracts" "make integration SUITE=$1" "make script SUITE=declared" "make integration SUITE=audit" \
    "make e2e FILE=$1"
}
if [[ ${1:-} == --plan ]]; then plan "${2:-}" "${3:-}"; exit 0; fi
name=${1:-}
kind=${2:-}
shift 2 || true
[[ $name =~ ^[a-z][a-z0-9_]{2,40}$ ]] || die "NAME must be snake_case (a-z, 0-9, _; 3 to 41 characters), e.g. list_open_cases"
plan "$name" "$kind" >/dev/null
fn=${name}_$([[ $kind == read ]] && echo for || echo as)
for f in "server/capabilities/$name.json" "migrations/functions/fleet.$fn.sql" \
  "tests/integration/test_$name.c" "tests/e2e/$name.test.mjs"; do
  [[ -e $f ]] && die "$f exists already"
done
grep -qs "\"name\": \"$name\"" server/capabilities/*.json && die "a row named $name exists already"
roles=("$@")
if ((${#roles[@]} == 0)); then
  if [[ $kind == read ]]; then roles=(viewer customer_care fleet_operator); else roles=(fleet_operator); fi
fi
last=$(ls migrations/[0-9][0-9][0-9][0-9]_*.sql | sed -E 's|.*/([0-9]{4})_.*|\1|' | sort -n | tail -n 1)
num=$(printf '%04d' $((10#$last + 1)))
for r in "${roles[@]}"; do [[ $r =~ ^[a-z][a-z0-9_]*$ ]] || die "ROLE $r is not a role (a lower case word)"; done
roles_json=$(printf '"%s", ' "${roles[@]}")
roles_json="[${roles_json%, }]"
roles_sql=$(printf "'%s', " "${roles[@]}")
roles_sql=${roles_sql%, }
title=$(sed -E 's/_/ /g; s/^(.)/\U\1/' <<<"$name")
ident=$(tr -d '_' <<<"$name" | cut -c1-12)
t_body=$(mktemp)
# The example's callers: one the roles allow (marie, customer_care, or olivia, fleet_operator,
# both in FR-PAR), one they allow who sees other regions (paul, FR-LYO; or none), one they refuse.
caller=marie outside='"outside": {"subject": "paul", "client": "customer-care-assistant"}, '
refused=''
[[ " ${roles[*]} " == *" customer_care "* ]] || { caller=olivia; outside=''; }
for who in dev:viewer marie:customer_care olivia:fleet_operator; do
  [[ " ${roles[*]} " == *" ${who#*:} "* ]] || { refused="\"refused\": {\"subject\": \"${who%%:*}\", \"client\": \"customer-care-assistant\"}, "; break; }
done
client=customer-care-assistant
[[ $caller == olivia ]] && client=ops-assistant

if [[ $kind == read ]]; then
  # ---- a read: its declaration and its function ----------------------------------------------
  cat >"server/capabilities/$name.json" <<EOF
{
  "summary": "$title: one bike as the caller may see it (a skeleton from make new-capability: make it read what the tool is for).",
  "roles": $roles_json,
  "scope": "fleet:read",
  "read": {
    "function": "fleet.$fn",
    "key": "bike_id",
    "region": "region",
    "returns": "one",
    "columns": [
      {"column": "bike_id", "type": "text", "name": "bikeId", "schema": {"type": "string"}},
      {"column": "region", "type": "text", "name": "region", "schema": {"type": "string"}},
      {"column": "status", "type": "text", "name": "status", "schema": {"type": "string"}}
    ],
    "refusals": {
      "not_found": "Bike {key} was not found among the bikes you can access."
    }
  },
  "tools": [{
    "name": "$name",
    "title": "$title",
    "description": "$title (say what it does, what it needs and what it returns).",
    "key": "bikeId",
    "input": {
      "type": "object",
      "properties": {
        "bikeId": {"type": "string", "pattern": "^VL-[0-9]{4,6}\$", "description": "The bike's id, e.g. VL-2048."}
      },
      "required": ["bikeId"],
      "additionalProperties": false
    },
    "read_only": true,
    "idempotent": true,
    "audit": {"target": "bikeId"},
    "example": {"arguments": {"bikeId": "VL-2048"}, "caller": {"subject": "$caller", "client": "$client"}, $outside${refused}"fixture": null},
    "governance": {
      "version": "0.1.0",
      "risk": "low",
      "data": "internal: fleet operations data of the caller's regions",
      "systems": "postgresql:fleet",
      "confirmation": "none (read-only)",
      "audit": "one audit row per call: subject, client, tool, bikeId, argument digest, outcome, request id"
    }
  }]
}
EOF
  cat >"migrations/functions/fleet.$fn.sql" <<EOF
-- ${name}: for any number of keys, the rows the transaction's identity may see under row-level
-- security, one per visible key, naming its key (server/capabilities/${name}.json declares its
-- columns, in this order). Plain SQL that PostgreSQL inlines into the server's statement
-- (domain/reads.h): the unit's fleet.act_as has set the identity, the statement judges who may
-- use the capability and writes the calls' audit rows; the rights and every row's region are
-- judged again in C. Skeleton from make new-capability: it reads bikes; make it read what the
-- tool is for.
CREATE OR REPLACE FUNCTION fleet.${fn}(p_bike_ids text[])
RETURNS TABLE (bike_id text, region text, status text)
LANGUAGE sql STABLE
AS \$\$
    SELECT b.bike_id, b.region, b.status
      FROM fleet.bikes b
     WHERE b.bike_id = ANY (p_bike_ids)
     ORDER BY b.bike_id
\$\$;

REVOKE ALL ON FUNCTION fleet.${fn}(text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.${fn}(text[]) TO fleet_app;
EOF
elif [[ $kind == write ]]; then
  # ---- a write: its table, its declaration and its function ----------------------------------
  table=${name}_notes
  cat >"migrations/${num}_${name}.sql" <<EOF
-- ${name}: what its calls record (skeleton from make new-capability: make it the table the write
-- needs). Row-level security as for every business table: a caller reads the rows of its
-- regions, and inserts only as itself, in its perimeter, with the write right of the call
-- (fleet.write_begin sets it from the capability's roles).
CREATE TABLE fleet.${table} (
    note_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    bike_id     text NOT NULL REFERENCES fleet.bikes(bike_id),
    region      text NOT NULL REFERENCES fleet.regions(code),
    note        text NOT NULL CHECK (length(note) BETWEEN 1 AND 500),
    created_by  text NOT NULL,
    created_via text NOT NULL,
    created_at  timestamptz NOT NULL
);
ALTER TABLE fleet.${table} ENABLE ROW LEVEL SECURITY;
ALTER TABLE fleet.${table} FORCE ROW LEVEL SECURITY;
CREATE POLICY ${table}_read ON fleet.${table} FOR SELECT
    USING (region = ANY (fleet.current_regions()));
CREATE POLICY ${table}_write ON fleet.${table} FOR INSERT
    WITH CHECK (region = ANY (fleet.current_regions()) AND fleet.current_may_report()
                AND created_by = fleet.current_subject() AND created_via = fleet.current_client());
CREATE POLICY owner_all ON fleet.${table} TO fleet_owner USING (true) WITH CHECK (true);
GRANT SELECT, INSERT ON fleet.${table} TO fleet_app;
EOF
  cat >"server/capabilities/$name.json" <<EOF
{
  "summary": "$title: records a note on one bike (a skeleton from make new-capability: make it write what the tool is for).",
  "roles": $roles_json,
  "scope": "fleet:report",
  "people_only": true,
  "write": {
    "function": "fleet.$fn",
    "columns": [
      {"column": "note_id", "type": "bigint", "name": "noteId", "schema": {"type": "integer"}},
      {"column": "bike_id", "type": "text", "name": "bikeId", "schema": {"type": "string"}},
      {"column": "created_at", "type": "text", "name": "createdAt", "schema": {"type": "string", "format": "date-time"}}
    ],
    "action": "recording notes",
    "confirmation": {
      "policy": "always",
      "title": "Record this note now",
      "description": "Check the bike id and the note above before you confirm."
    },
    "idempotency": {"argument": "idempotencyKey"},
    "refusals": {
      "not_found": "Bike {bikeId} was not found among the bikes you can access. Nothing was recorded.",
      "forbidden": "You are not permitted to record notes: {why}. Nothing was recorded.",
      "key_conflict": "This idempotencyKey was already used with other arguments. Nothing was recorded.",
      "declined": "Nothing was recorded: the confirmation was declined. Ask the user before trying again."
    }
  },
  "tools": [{
    "name": "$name",
    "title": "$title",
    "description": "$title (say what it changes, what it needs and what it returns). This changes state; with an idempotencyKey a retry returns the first result.",
    "input": {
      "type": "object",
      "properties": {
        "bikeId": {"type": "string", "pattern": "^VL-[0-9]{4,6}\$", "description": "The bike's id, e.g. VL-2048."},
        "note": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The note (at most 500 characters)."},
        "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Optional: a key you choose that makes retries safe."}
      },
      "required": ["bikeId", "note"],
      "additionalProperties": false
    },
    "read_only": false,
    "destructive": false,
    "idempotent": false,
    "audit": {"target": "bikeId"},
    "example": {"arguments": {"bikeId": "VL-2048", "note": "checked"}, "caller": {"subject": "$caller", "client": "$client"}, $outside${refused}"fixture": null},
    "governance": {
      "version": "0.1.0",
      "risk": "low",
      "data": "internal: fleet operations data; the note may hold what a person wrote",
      "systems": "postgresql:fleet",
      "confirmation": "always confirmed by the user on the server's side (elicitation)",
      "audit": "one audit row per call, in the write's own transaction"
    }
  }]
}
EOF
  cat >"migrations/functions/fleet.$fn.sql" <<EOF
-- ${name}, a write (migrations/README.md, "A write function"; its declaration:
-- server/capabilities/${name}.json): records a note on one bike, in one transaction as the
-- caller. Skeleton from make new-capability: make it do what the tool is for.
CREATE OR REPLACE FUNCTION fleet.${fn}(c fleet.write_call)
RETURNS fleet.write_answer
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, fleet, pg_temp
AS \$\$
DECLARE
    w  fleet.write_state;
    bk record;
    n  record;
BEGIN
    w := fleet.write_begin('${name}', c);
    IF (w.answer).outcome IS NOT NULL THEN RETURN w.answer; END IF;
    SELECT b.bike_id, b.region INTO bk FROM bikes b WHERE b.bike_id = c.args ->> 'bikeId' FOR UPDATE;
    IF NOT FOUND THEN RETURN fleet.write_stop(w, 'not_found'); END IF;
    IF fleet.write_asks(w) THEN
        RETURN fleet.write_stop(w, 'confirmation_required', bk.region,
                                format('record the note %L on bike %s (region %s)',
                                       c.args ->> 'note', bk.bike_id, bk.region));
    END IF;
    INSERT INTO ${table} (bike_id, region, note, created_by, created_via, created_at)
    VALUES (bk.bike_id, bk.region, c.args ->> 'note', c.subject, c.client, clock_timestamp())
    RETURNING * INTO n;
    RETURN fleet.write_done(w, bk.region, to_jsonb(r)) FROM (
        SELECT n.note_id, n.bike_id,
               to_char(n.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at) r;
END
\$\$;

REVOKE ALL ON FUNCTION fleet.${fn}(fleet.write_call) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION fleet.${fn}(fleet.write_call) TO fleet_app;
EOF
  sed -i 's/, "fixture": null}/}/' "server/capabilities/$name.json"
else
  # ---- a step of the case workflow: its tool, its row in the step table, its event -------------
  from=${FROM:-} to=${TO:-}
  n=$((800000 + $(cksum <<<"$name" | cut -d' ' -f1) % 100000))
  bike=VL-$n case=IC-$n
  python3 - "$name" "$title" "$from" "$to" "$roles_json" "$caller" "$client" "$bike" "$case" "$num" \
    "$refused" <<'PY' || die "FROM and TO must be states of the workflow (server/capabilities/case_workflow.json)"
import json, re, sys
name, title, src, dst, roles, caller, client, bike, case, num, refused = sys.argv[1:]
wf = "server/capabilities/case_workflow.json"
text = open(wf).read()
states = next(c for c in json.loads(text)["write"]["columns"] if c["column"] == "state")["schema"]["enum"]
if src not in states or dst not in states or src == dst:
    sys.exit(1)
# Its event: the case events' CHECK, as the last migration that set it says, with its kind added.
kinds = None
for path in sorted(__import__("glob").glob("migrations/[0-9][0-9][0-9][0-9]_*.sql")):
    m = re.findall(r"ADD CONSTRAINT case_events_kind_check\s+CHECK \(kind IN \(([^)]*)\)\)", open(path).read())
    kinds = m[-1] if m else kinds
open(f"migrations/{num}_{name}.sql", "w").write(
    f"-- {name}: the case workflow's step {src} -> {dst} (skeleton from make new-capability) is recorded\n"
    f"-- as a case event of its own kind. The CHECK is replaced under its name in one statement and admits\n"
    f"-- all the old one did (the previous release writes on this schema during a rolling upgrade).\n"
    f"ALTER TABLE fleet.case_events\n    DROP CONSTRAINT case_events_kind_check,\n"
    "    ADD CONSTRAINT case_events_kind_check\n        CHECK (kind IN ("
    + "\n                        ".join(__import__("textwrap").wrap(" ".join(kinds.split()) + f", '{name}'", 70))
    + "));\n")
steps = "migrations/functions/fleet.case_steps.sql"
sql = open(steps).read()
end = sql.index("\n$$;")
open(steps, "w").write(sql[:end] + f",\n           ('{name}', NULL, NULL, '{src}', '{dst}', '{name}', NULL)" + sql[end:])
fields = {"inspected": "finding = 'repairable'", "awaiting_approval": "finding = 'beyond_repair', "
          "write_off_requested_by = 'nadia', write_off_requested_via = 'ops-assistant', write_off_requested_at = now()",
          "closed": "closed_at = now(), closed_by = 'olivia', closed_via = 'ops-assistant'"}.get(src, "")
fixture = (f"INSERT INTO fleet.bikes (bike_id, region, status, battery_pct, last_seen_at) VALUES ('{bike}', 'FR-PAR', "
           f"'unavailable', 80, now()) ON CONFLICT (bike_id) DO UPDATE SET status = 'unavailable'; "
           f"DELETE FROM fleet.tasks WHERE case_id = '{case}'; DELETE FROM fleet.case_events WHERE case_id = '{case}'; "
           f"DELETE FROM fleet.cases WHERE case_id = '{case}'; INSERT INTO fleet.cases (case_id, bike_id, region, state, "
           f"opened_at, opened_by, opened_via, updated_at) VALUES ('{case}', '{bike}', 'FR-PAR', 'open', now(), 'olivia', "
           f"'ops-assistant', now()); UPDATE fleet.cases SET state = '{src}'{', ' + fields if fields else ''} WHERE case_id = "
           f"'{case}'; INSERT INTO fleet.case_events (case_id, region, kind, actor_subject, actor_client, at) VALUES "
           f"('{case}', 'FR-PAR', 'opened', 'olivia', 'ops-assistant', now())")
refusals = {f"case_{s}": f"Case {{caseId}} is at step {s}: {name} takes a case at step {src}. Nothing was changed."
            for s in states if s != src}
refusals["invalid_arguments"] = "The arguments are not valid for this step: caseId must be a case id, note 1 to 1000 characters when given. Nothing was changed."
refusals["declined"] = "Nothing was changed: the confirmation was declined or cancelled. Ask the user before trying again."
refusals["confirmation_unsupported"] = "This step must be confirmed on the server's side, which needs an MCP 2026-07-28 client with form elicitation. Nothing was changed."
tool = {
    "name": name, "title": title,
    "description": f"{title}: takes an investigation case from step {src} to {dst} (say what the step is for, who takes it and what follows). This changes state; with an idempotencyKey a retry returns the first result.",
    "roles": json.loads(roles),
    "write": {"action": f"taking the step {name}",
              "confirmation": {"policy": "always", "title": "Take this step now",
                               "description": "Check the case and what follows above before you confirm."},
              "refusals": refusals},
    "input": {"type": "object", "properties": {
        "caseId": {"type": "string", "pattern": "^IC-[0-9]{4,9}$", "description": "The investigation case, e.g. IC-1001."},
        "note": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Optional: why (up to 1000 characters)."},
        "idempotencyKey": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Optional: a key you choose that makes retries safe."}},
        "required": ["caseId"], "additionalProperties": False},
    "read_only": False, "destructive": False, "idempotent": False,
    "audit": {"target": "caseId"},
    "example": dict({"arguments": {"caseId": case}, "caller": {"subject": caller, "client": client}},
                    **(json.loads("{" + refused.rstrip(", ") + "}") if refused else {}), fixture=fixture),
    "governance": {"version": "0.1.0", "risk": "low", "data": "internal: fleet operations data; the note may hold what a person wrote",
                   "systems": "postgresql:fleet", "confirmation": "always confirmed by the user on the server's side (elicitation)",
                   "audit": "one audit row per call, in the step's own transaction; the step itself is a case event"}}
tail = "\n  ]\n}\n"
assert text.endswith(tail)
body = "\n".join("    " + l for l in json.dumps(tool, indent=2, ensure_ascii=False).split("\n"))
open(wf, "w").write(text[: -len(tail)] + ",\n" + body + tail)
# The texts that teach the steps name the new one, in words to make the step's own: the steps
# table's row of FROM (taken with it when nothing took a case from FROM, else a way on from it),
# and the prompt's list of the steps.
sys.path.insert(0, "scripts")
from casetexts import ROLE_WORDS, TEXTS, PROMPT, TICKED
words = {r: w for w, r in ROLE_WORDS.items()}
who = " or ".join("a " + words.get(r, r) for r in json.loads(roles))
scope = json.loads(text)["scope"]
for path in TEXTS:
    lines = open(path).read().split("\n")
    if path.endswith(PROMPT):
        at = next(i for i, l in enumerate(lines) if "The steps: " in l)
        lines[at] = lines[at].replace("The steps: ", f"The steps: {name} takes a case from {src} to {dst}; ", 1)
    else:
        head = next(i for i, l in enumerate(lines) if l.startswith("| step of the case |"))
        cols = [c.strip() for c in lines[head].strip().strip("|").split("|")]
        at = next(i for i in range(head + 2, len(lines)) if TICKED.findall(lines[i])[:1] == [src])
        row = dict(zip(cols, [c.strip() for c in lines[at].strip().strip("|").split("|")]))
        if not TICKED.findall(row["with"]):
            row.update({"who takes the next step": who, "with": f"`{name}`", "what follows": f"`{dst}`"})
            row.update({"scope": f"`{scope}`"} if "scope" in row else {})
        else:
            row["what follows"] += f"; or {who} takes it to `{dst}` with `{name}`"
        lines[at] = "| " + " | ".join(row[c] for c in cols) + " |"
    open(path, "w").write("\n".join(lines))
PY
fi

# ---- its own tests -------------------------------------------------------------------------------
if [[ $kind == read ]]; then
  cat >"$t_body" <<'EOF'
	/* In the caller's perimeter: its object. */
	json_t *res = it_tool(srv.port, "@NAME@", "{\"bikeId\":\"VL-2048\"}", NULL, NULL, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "structuredContent"),
							   "region")),
			 "FR-PAR");
	it_response_free(&r);
	/* Another region's bike reads as not found (no existence oracle). */
	res = it_tool(srv.port, "@NAME@", "{\"bikeId\":\"VL-2049\"}", NULL, NULL, &r);
	ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_ptr_null(json_object_get(res, "structuredContent"));
	it_response_free(&r);
EOF
elif [[ $kind == step ]]; then
  cat >"$t_body" <<'EOF'
	/* The example's case (its fixture), at step @FROM@. */
	const struct capability_example *e = ex_find("tool", "@NAME@");
	ck_assert_ptr_nonnull(e);
	ex_fixture(e);
	/* Always confirmed on the server's side: declined, the case stays where it is. */
	json_t *res = it_tool_confirmed(srv.port, "@NAME@", e->arguments, false, &r);
	ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_int_eq(it_count("SELECT count(*) FROM fleet.cases WHERE case_id = '@CASE@' AND "
				  "state = '@FROM@'"),
			 1);
	it_response_free(&r);
	/* Accepted, the case goes to @TO@, and the step is its event. */
	res = it_tool_confirmed(srv.port, "@NAME@", e->arguments, true, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "structuredContent"),
							   "state")),
			 "@TO@");
	ck_assert_int_eq(it_count("SELECT count(*) FROM fleet.case_events WHERE case_id = '@CASE@' "
				  "AND kind = '@NAME@'"),
			 1);
	it_response_free(&r);
EOF
else
  cat >"$t_body" <<'EOF'
	/* Always confirmed on the server's side: declined, nothing is written. */
	static const char args[] = "{\"bikeId\":\"VL-2048\",\"note\":\"checked\"}";
	long before = it_count("SELECT count(*) FROM fleet.@TABLE@");
	json_t *res = it_tool_confirmed(srv.port, "@NAME@", args, false, &r);
	ck_assert_msg(json_is_true(json_object_get(res, "isError")), "%s", r.body);
	ck_assert_int_eq(it_count("SELECT count(*) FROM fleet.@TABLE@"), before);
	it_response_free(&r);
	/* Accepted, it writes once and answers what it wrote. */
	res = it_tool_confirmed(srv.port, "@NAME@", args, true, &r);
	ck_assert_msg(json_is_false(json_object_get(res, "isError")), "%s", r.body);
	ck_assert(json_is_integer(json_object_get(json_object_get(res, "structuredContent"),
						  "noteId")));
	ck_assert_int_eq(it_count("SELECT count(*) FROM fleet.@TABLE@"), before + 1);
	it_response_free(&r);
EOF
fi
cat >"tests/integration/test_$name.c" <<'EOF'
/* @NAME@ against the real server and PostgreSQL: its own behaviour (make new-capability wrote
 * this: add the tool's own cases). Every call leaves exactly one audit row (it_tool checks it);
 * the suites that walk every declaration check its roles, its contract and its columns. */
#include <check.h>

#include "examples.h"
#include "harness.h"
#include "tests/check_main.h"

START_TEST(@IDENT@_behaves_as_declared)
{
	/* A server acting as the declaration's example caller. */
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=@CALLER@", "BIKAROO_LOCAL_CLIENT=@CLIENT@",
			     "BIKAROO_LOCAL_SCOPES=fleet:read fleet:report", NULL};
	struct it_server srv;
	ck_assert_int_eq(it_server_start(&srv, env), 0);
	struct it_response r;
@BODY@
	ck_assert_int_eq(it_server_stop(&srv), 0);
}
END_TEST

CHECK_SUITE(@NAME@)
{
	Suite *s = suite_create("@NAME@");
	TCase *tc = tcase_create("behaviour");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, @IDENT@_behaves_as_declared);
	suite_add_tcase(s, tc);
	return s;
}
EOF
sed -i -e "/@BODY@/{r $t_body" -e 'd}' "tests/integration/test_$name.c"
sed -i "s/@NAME@/$name/g; s/@IDENT@/$ident/g; s/@CALLER@/$caller/g; s/@CLIENT@/$client/g; s/@TABLE@/${table:-}/g;
  s/@CASE@/${case:-}/g; s/@FROM@/${from:-}/g; s/@TO@/${to:-}/g" "tests/integration/test_$name.c"
rm -f "$t_body"
fixture=''
[[ $kind == step ]] && fixture="runFixture(example, 'server/capabilities/case_workflow.json: ${name}'); // its case, at step ${from:-}
    "
if [[ $kind == read ]]; then
  call="const r = await client.callTool({ name: '${name}', arguments: example.arguments }, undefined, REQ);
    assert.equal(r.isError, false);
    assert.equal(r.structuredContent.bikeId, 'VL-2048');"
else
  call="${fixture}// Always confirmed on the server's side: a client without elicitation is told what it lacks.
    const err = await rejection(client.callTool({ name: '${name}', arguments: example.arguments }, undefined, REQ));
    assert.equal(err.code, -32021, String(err));
    assert.deepEqual(err.data?.requiredCapabilities, { elicitation: {} });"
fi
cat >"tests/e2e/$name.test.mjs" <<EOF
// ${name} through the official v2 client (make new-capability wrote this: add the tool's own
// cases): listed for its declaration's example caller, and called with its example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { declaredExample, rejection, runFixture, slow, startServer } from './serve.mjs';

const T = { timeout: slow ? 60000 : 20000 };
const REQ = { timeout: slow ? 30000 : 15000 };
const example = declaredExample('${name}');

test('${name}: listed and answered through the official client', T, async () => {
  const server = await startServer(example.caller.subject, example.caller.client);
  const client = new Client({ name: 'e2e-${name}', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)), REQ);
    const tools = await client.listTools(undefined, REQ);
    assert.ok(tools.tools.some((t) => t.name === '${name}'));
    ${call}
  } finally {
    await client.close();
    assert.equal(await server.stop(), 0);
  }
});
EOF

# ---- the generated edits: the docs' governance table, then the contract -----------------------
make -s --no-print-directory format >/dev/null
make -s --no-print-directory docs-tables
make -s --no-print-directory contracts

echo "new-capability: $kind tool $name written:"
git status --short | sed 's/^/  /'
echo "Next: make its declaration and SQL say what the tool is for (server/capabilities/README.md), then"
plan "$name" "$kind" | sed -n 's/^run /  /p'
