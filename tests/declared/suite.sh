#!/usr/bin/env bash
# Declarations (server/capabilities/NAME.json) hold the field lists the build and the database
# share. Against the test database: every declared function's arguments and result are what its
# declaration says (a read's RETURNS TABLE, a write's answer to each tool's example), and
# fleet.capabilities holds its roles (scripts/declcheck.py), and a declaration that disagrees is
# named with what to change. Then the build's own checks (build/capgen, against
# server/capabilities/declaration.schema.json): each kind of mistake in a declaration fails with
# the file, the place and the fix. Needs the migrated test database (scripts/test.sh, scripts/suite.sh).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/lib/harness.sh
suite_init "$@"

# 1. The tree's declarations against the database.
python3 scripts/declcheck.py "$IT_SUPER_URL" >"$t/real.out" 2>&1
sed 's/^#/# /' "$t/real.out" | grep -v '^ok - \|^not ok - ' >&2
grep -E '^(ok|not ok) - ' "$t/real.out"
failures=$((failures + $(grep -c '^not ok - ' "$t/real.out")))

check "docs/capabilities.md's governance table and README.md's and docs/capabilities.md's \"What it serves\" tables are the ones the declarations make (make docs-tables)" \
  python3 scripts/doctable.py check README.md docs/capabilities.md
# A table that lost a row, or that a doc no longer holds, is named.
sed '/`decide_write_off`/d' README.md >"$t/README.md"
python3 scripts/doctable.py check "$t/README.md" >"$t/table.out" 2>&1
check "a \"What it serves\" table without one of the tools is refused, saying to run make docs-tables" \
  grep -q 'README.md: its table `| kind | name | what for | scope | roles |` is not the one the declarations make: run `make docs-tables`' "$t/table.out"

# The texts that say how a case is worked (the procedure, the prompt, docs/cases.md) against the
# declarations and the database; then each kind of drift, planted in a copy, is named.
# A run that ends without its findings (a crash) fails too.
python3 scripts/casetexts.py "$IT_SUPER_URL" >"$t/texts.out" 2>&1 ||
  grep -q '^not ok - ' "$t/texts.out" || nok "casetexts.py ended without a finding: $(tail -n 3 "$t/texts.out")"
grep -E '^(ok|not ok) - ' "$t/texts.out"
grep '^#' "$t/texts.out" >&2
failures=$((failures + $(grep -c '^not ok - ' "$t/texts.out")))
mkdir -p "$t/texts"
planted() { # planted WHAT FILE SED_EXPR EXPECTED_TEXT: FILE's copy edited by SED_EXPR is refused
  local what=$1 file=$2 expr=$3 want=$4 copy
  copy="$t/texts/$(basename "$file")"
  sed -E "$expr" "$file" >"$copy"
  if python3 scripts/casetexts.py "$IT_SUPER_URL" "$copy" >"$t/planted-text.out" 2>&1; then
    nok "$what: the text was accepted"
  elif grep -qF "$want" "$t/planted-text.out"; then
    ok "$what"
  else
    nok "$what: $(cat "$t/planted-text.out")"
  fi
}
planted "a field no answer has (the prompt's old caseStep) is named" prompts/investigate-damaged-bike.md \
  's/shows it as openCaseId/shows it as openCaseId, its step as caseStep/' 'names caseStep, which the server has not'
planted "a step said to be taken by people its tool's roles do not allow is named" resources/damaged-bike.md \
  's/^(\| `inspection_requested` \| )a technician/\1a fleet operator/' \
  "inspection_requested: record_inspection is for ['technician'], the table says ['fleet_operator']"
planted "a value a step's tool does not take, or one left out, is named" docs/cases.md \
  's/`no_fault` or `beyond_repair`/`no_fault` or `scrapped`/' \
  "record_inspection chooses among ['beyond_repair', 'no_fault', 'repairable'], the table says ['no_fault', 'repairable', 'scrapped']"
planted "a step leading elsewhere than the workflow says is named" resources/damaged-bike.md \
  's/^(\| `open` .*)`inspection_requested`: the case waits/\1`inspected`: the case waits/' \
  "open: request_inspection leads to ['inspection_requested'], the table says ['inspected']"
planted "a text that leaves out a step's tool is named" prompts/investigate-damaged-bike.md \
  's/decide_write_off/the second operator/g' 'does not name decide_write_off'
planted "a text that leaves out a person's queue is named" resources/damaged-bike.md \
  's/"step": "awaiting_approval", "waitingForMe": true/"step": "awaiting_approval"/' \
  'does not show the queue {"step": "awaiting_approval", "waitingForMe": true} (list_cases)'
planted "queue arguments the tool would refuse are named" prompts/investigate-damaged-bike.md \
  's/\{"waitingForMe": true\}/{"waitingForMe": "yes"}/' \
  'shows {"waitingForMe": "yes"}, which list_cases refuses: waitingForMe must be a boolean'
planted "a step no case has, in a queue's arguments, is named" docs/cases.md \
  's/"step": "inspected", "waitingForMe"/"step": "repaired", "waitingForMe"/' \
  'which list_cases refuses: step is one of open, inspection_requested, inspected, awaiting_approval, closed'
planted "a URI no resource has is named" docs/cases.md \
  's#`bikaroo://fleet/regions`#`bikaroo://fleet/areas`#' 'names bikaroo://fleet/areas, which is no declared resource or template'

# 2. A declaration that no longer matches its function is named, with the fix.
mkdir -p "$t/decl"
python3 - "$t/decl/bike_status.json" <<'PY'
import json, sys
d = json.load(open("server/capabilities/bike_status.json"))
d["read"]["columns"][6]["type"] = "integer"   # battery_pct is smallint in the function
json.dump(d, open(sys.argv[1], "w"))
PY
python3 scripts/declcheck.py "$IT_SUPER_URL" "$t/decl/bike_status.json" >"$t/planted.out" 2>&1
check "a column type the function does not return is named, with the fix" \
  grep -q 'read.columns\[6\] says battery_pct integer, fleet.bike_status_for returns battery_pct smallint at position 7: make the declaration and the function' "$t/planted.out"
python3 - "$t/decl/bike_status.json" <<'PY'
import json, sys
d = json.load(open("server/capabilities/bike_status.json"))
del d["read"]["columns"][5]                    # station_name, withheld but returned
json.dump(d, open(sys.argv[1], "w"))
PY
python3 scripts/declcheck.py "$IT_SUPER_URL" "$t/decl/bike_status.json" >"$t/planted.out" 2>&1
check "a column the declaration leaves out is named, with the fix" \
  grep -q 'says battery_pct smallint, fleet.bike_status_for returns station_name text at position 6' "$t/planted.out"
# A write's result is checked by running each tool's example (rolled back): a column its
# declaration does not list, and a value of another type, are named with the fix.
python3 - "$t/decl/damage_report.json" <<'PY'
import json, sys
d = json.load(open("server/capabilities/damage_report.json"))
d["write"]["columns"] = [c for c in d["write"]["columns"] if c["column"] != "recorded_at"]
d["write"]["columns"][1]["type"] = "integer"   # status is text in the function's result
json.dump(d, open(sys.argv[1], "w"))
PY
python3 scripts/declcheck.py "$IT_SUPER_URL" "$t/decl/damage_report.json" >"$t/planted.out" 2>&1
check "a write's result column the declaration does not list is named, with the fix" \
  grep -q 'fleet.report_damaged_bike_as answers report_damaged_bike with column recorded_at, which write.columns does not list' "$t/planted.out"
check "a write's result value of another type is named" \
  grep -q 'answers report_damaged_bike with status "unavailable", not the integer write.columns says' "$t/planted.out"
check "the example's call was rolled back: no report of declcheck's stays" \
  test "$(psql -X -At "$IT_SUPER_URL" -c "SELECT count(*) FROM fleet.audit_log WHERE request_id = 'declcheck'")" = 0
# The case workflow: the step table, the CHECKs and the declarations name the same states and
# steps; a state an enum lacks, and a step's branch its argument does not take, are named.
python3 - "$t/decl/case_workflow.json" <<'PY'
import json, sys
d = json.load(open("server/capabilities/case_workflow.json"))
state = next(c for c in d["write"]["columns"] if c["column"] == "state")
state["schema"]["enum"].remove("awaiting_approval")
close = next(t for t in d["tools"] if t["name"] == "close_case")
close["input"]["properties"]["resolution"]["enum"].remove("written_off")
json.dump(d, open(sys.argv[1], "w"))
PY
python3 scripts/declcheck.py "$IT_SUPER_URL" "$t/decl/case_workflow.json" >"$t/planted.out" 2>&1
check "a state the declaration's enum lacks is named against the step table" \
  grep -q "case_workflow.json: write.columns state's enum says .*, the step table .*'awaiting_approval'.*: make them the same" "$t/planted.out"
check "a step's branch its tool's argument does not take is named" \
  grep -q "close_case's argument resolution takes .*, its steps in fleet.case_steps() .*'written_off'" "$t/planted.out"
# A read function PostgreSQL cannot inline (a SET clause routes every call through
# fmgr_security_definer) is named, with what keeps it from being inlined.
psql -X -q "$IT_SUPER_URL" -c "ALTER FUNCTION fleet.bike_status_for(text[]) SET search_path = pg_catalog, fleet"
python3 scripts/declcheck.py "$IT_SUPER_URL" server/capabilities/bike_status.json >"$t/planted.out" 2>&1
psql -X -q "$IT_SUPER_URL" -c "ALTER FUNCTION fleet.bike_status_for(text[]) RESET ALL"
check "a read function PostgreSQL cannot inline is named, with what keeps it from being inlined" \
  grep -q 'fleet.bike_status_for is not a read PostgreSQL can inline (SET search_path=pg_catalog, fleet): make it LANGUAGE sql STABLE' "$t/planted.out"
check "and the function as migrate made it is one" \
  python3 scripts/declcheck.py "$IT_SUPER_URL" server/capabilities/bike_status.json
psql -X -q "$IT_SUPER_URL" -c "UPDATE fleet.capabilities SET roles = '{fleet_operator}' WHERE name = 'bike_status'"
python3 scripts/declcheck.py "$IT_SUPER_URL" server/capabilities/bike_status.json >"$t/planted.out" 2>&1
check "roles in fleet.capabilities that differ from the declaration's say to run migrate" \
  grep -q "fleet.capabilities says .*fleet_operator.* for bike_status, the declaration .*: run \`bikaroo-mcp migrate\`" "$t/planted.out"
DATABASE_URL=$BIKAROO_MIGRATE_URL "$bin" migrate >/dev/null 2>&1
check "migrate puts the declared roles back" \
  python3 scripts/declcheck.py "$IT_SUPER_URL" server/capabilities/bike_status.json

# 3. The build refuses a declaration it cannot generate, naming the file, the place and the fix:
# what one field says of another is a rule of the declarations' schema, whose words the message
# ends with; what a schema cannot say (a name that is a column or an argument) is capgen's.
refused() { # refused WHAT PYTHON_EDIT EXPECTED_TEXT [DECLARATION]: DECLARATION (status_codes), edited
  local what=$1 edit=$2 want=$3 base=${4:-status_codes}
  python3 - "$t/decl/$base.json" "$edit" "server/capabilities/$base.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[3]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"))
PY
  if "$B/capgen" "$t/gen" server/capabilities/declaration.schema.json "$t/decl/$base.json" >"$t/gen.out" 2>&1; then
    nok "$what: the build accepted it"
  elif grep -qF "$want" "$t/gen.out"; then
    ok "$what: $(head -n 1 "$t/gen.out" | sed "s|$t/decl/||")"
  else
    nok "$what: $(cat "$t/gen.out")"
  fi
}
mkdir -p "$t/gen"
refused "an unknown field" 'd["read"]["colums"] = []' \
  'status_codes.json: read: unknown field "colums" (known: function, key, region, returns, list, page, columns, refusals) (server/capabilities/declaration.schema.json)'
refused "an unknown field deep in a row, named by its path" 'd["resources"][0]["governance"]["owners"] = "x"' \
  'status_codes.json: resources[0].governance: unknown field "owners" (known: version, risk'
refused "a type the server does not read" 'd["read"]["columns"][0]["type"] = "varchar"' \
  'read.columns[0].type: must be one of: text, smallint, integer, bigint, boolean, json, jsonb.'
refused "a shown type that is not the column's" 'd["read"]["columns"][3]["schema"]["type"] = "string"' \
  'read.columns[3].schema.type: must be "boolean". (a shown column'"'"'s schema has its SQL type'"'"'s JSON "type"'
refused "a read function not named NAME_for" 'd["read"]["function"] = "fleet.status_codes_as"' \
  'read.function: does not have the expected form (^fleet\.[a-z][a-z0-9_]*_for$).'
refused "a role that is no word" 'd["roles"] = ["Fleet Operator"]' \
  'roles[0]: does not have the expected form (^[a-z][a-z0-9_]*$).'
refused "a scope no token carries" 'd["scope"] = "fleet:write"' \
  'scope: must be one of: fleet:read, fleet:report.'
refused "a required field missing" 'del d["resources"][0]["governance"]["risk"]' \
  'resources[0].governance: "risk" is missing'
refused "a column both shown and withheld" 'd["read"]["columns"][0]["withheld"] = "why"' \
  'read.columns[0].name: must not match the "not" schema. (a column is shown ("name" and "schema") or "withheld"'
refused "a column neither shown nor withheld" 'del d["read"]["columns"][0]["name"]' \
  'read.columns[0]: "name" is missing (a column is shown ("name" and "schema") or "withheld"'
refused "an optional column of a read" 'd["read"]["columns"][0]["optional"] = True' \
  'read.columns[0].optional: must be false. (only a write'"'"'s column may be "optional"'
refused "a row without roles in a declaration without any" 'del d["roles"]' \
  'resources: must have at most 0 items, not 1. (a row without roles of its own (only a tool has its own) needs the declaration'"'"'s "roles")'
refused "a declaration with a read and a write" \
  'd["write"] = json.load(open("server/capabilities/damage_report.json"))["write"]' \
  'top level: must not match the "not" schema. (a declaration has a read or a write, not both: split it)'
refused "a read that returns a list without its key" 'del d["read"]["list"]' \
  'read: "list" is missing ("list" names the rows'"'"' key of a read that returns "list", and of no other)'
refused "a list key on a read that returns one row" 'd["read"]["returns"] = "one"' \
  'read.list: must not match the "not" schema. ("list" names the rows'"'"' key'
refused "a resource that is the read and a file" 'd["resources"][0]["file"] = "x.md"' \
  'resources[0].file: must not match the "not" schema. (a resource is a "file" shipped with the server, the declaration'"'"'s "read", or a C "handler": exactly one)'
refused "a key that is not a column" 'd["read"]["key"] = "code_id"' \
  'read: key "code_id" is not one of its columns'
refused "a schema keyword the validator lacks" 'd["read"]["columns"][0]["schema"]["oneOf"] = []' \
  'read.columns[0].schema: /oneOf: a keyword'
refused "a refusal naming a value neither the call nor the server has" \
  'd["read"]["refusals"] = {"not_found": "No {bikeId}."}' \
  'read: refusal "not_found" names {bikeId}, which is neither an argument of the input nor one of {key, why, outcome, scope, action, role, roles}'
refused "an unavailable refusal with a placeholder (it is an error's message, sent as is)" \
  'd["read"]["refusals"] = {"unavailable": "Down for {key}."}' \
  'read.refusals.unavailable: does not have the expected form (^[^{}]*$). (refusal "unavailable" is an error'"'"'s message: it names no {...})'
# A tool, a template, a write and a prompt argument: the rules between their fields.
refused "a C handler on a tool over the declaration's read" 'd["tools"][0]["handler"] = "list_cases_tool"' \
  'tools[0].handler: must not match the "not" schema. (a tool serves its declaration'"'"'s "read" or "write", or names its C "handler": one of them)' \
  list_cases
refused "a key on a tool over a read in pages" 'd["tools"][0]["key"] = "bikeId"' \
  'tools[0].key: must not match the "not" schema. (a tool over a read in pages has no "key"' list_cases
refused "a tool over a read in pages without the argument cursor" \
  'del d["tools"][0]["input"]["properties"]["cursor"]' \
  'tools[0].input.properties: "cursor" is missing (a tool over a read in pages has no "key" (its arguments are its query) and takes the argument "cursor")' \
  list_cases
refused "a tool's own roles over a read" 'd["tools"][0]["roles"] = ["viewer"]' \
  'tools[0].roles: must not match the "not" schema. (a tool'"'"'s own "roles" and "write" are of a tool over a write)' \
  list_cases
refused "a template over a read in pages" \
  'd["templates"] = json.load(open("server/capabilities/bike_status.json"))["templates"]' \
  'templates[0]: "handler" is missing (a template serves the declaration'"'"'s "read" (not one in pages: a template has no cursor), or names its C "handler")' \
  list_cases
refused "a read in pages whose after is no column" 'd["read"]["page"]["after"] = "nope"' \
  'read: page.after "nope" is not one of its columns' list_cases
refused "a write that does not say what it does" 'del d["write"]["action"]' \
  'tools[0]: "write" is missing (a write says what it does, for refusals ("action": "reporting"): in its "write", or in each tool'"'"'s)' \
  damage_report
refused "a write that asks without the form's title" 'del d["write"]["confirmation"]["title"]' \
  'write.confirmation: "title" is missing (a write that asks (any policy but never) has the form'"'"'s "title" and "description", one that never asks neither)' \
  damage_report
refused "a write that never asks with a form's title" 'd["write"]["confirmation"]["policy"] = "never"' \
  'write.confirmation.title: must not match the "not" schema. (a write that asks' damage_report
refused "an idempotency argument the input lacks" 'd["write"]["idempotency"]["argument"] = "nonce"' \
  'tools[0]: idempotency.argument "nonce" is not an argument of the input' damage_report
refused "a prompt argument's check without its message" \
  'del d["prompts"][0]["arguments"][0]["invalid_message"]' \
  'prompts[0].arguments[0]: "invalid_message" is missing (a "valid" check has its "invalid_message")' \
  procedures
# Every outcome has words: the schema's, a declaration's own taking precedence.
python3 - "$t/decl/status_codes.json" <<'PY'
import json, sys
d = json.load(open("server/capabilities/status_codes.json"))
d["read"]["refusals"] = {"forbidden": "Staff only ({outcome})."}
json.dump(d, open(sys.argv[1], "w"))
PY
"$B/capgen" "$t/gen" server/capabilities/declaration.schema.json "$t/decl/status_codes.json" >"$t/gen.out" 2>&1
check "a declaration's refusal words take the place of the schema's" \
  grep -qF '{"forbidden", "Staff only ({outcome})."}' "$t/gen/capabilities.c"
check "an outcome a declaration leaves out has the schema's words" \
  grep -qF '{"other", "The request could not be completed ({outcome})."}' "$t/gen/capabilities.c"
refused "a list in pages without a key (its query)" 'd["read"]["page"] = {"size": 20, "after": "code"}' \
  'read: "key" is missing (a read in pages is a "list" with its "key" (the query the server writes from the call))'
refused "a file that is no JSON object" 'd = None' \
  "status_codes.json: JSON: line 1, column 4: '[' or '{' expected"
suite_exit
