#!/usr/bin/env bash
# Capability contracts (docs/capabilities.md): checks the catalogue's contracts against the
# committed snapshot and the previous release's (tests/upgrade/PREVIOUS, from git: the rolling
# upgrade), and the capability table of docs/capabilities.md against the catalogue, then tests
# the checker on mutated copies of the real dump (a checker that accepts everything would pass
# the first part) and its output rule on the cases of rule-cases.json (rule.py).
# Usage: tests/contracts/suite.sh (a suite of scripts/test.sh; its build-directory argument is
# ignored: a check of data, not of memory, it always (re)builds build/contracts-dump through make
# with the default flags). No database. Prints one "ok - ..." / "not ok - ..." line per test
# (tests/lib/harness.sh); exits non-zero on any "not ok".
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
B=build # whatever the argument: see above
check="python3 scripts/contracts.py"
snap=tests/contracts/snapshot.json
doc=docs/capabilities.md

# Always through make, so that a changed catalogue is never checked with a stale binary.
if ! make -s --no-print-directory "B=$B" "$B/contracts-dump" >"$t/make.log" 2>&1; then
  cat "$t/make.log"; nok "build $B/contracts-dump"; suite_exit
fi
if "$B/contracts-dump" >"$t/current.json" 2>"$t/dump.err"; then ok "contracts-dump lists the catalogue"
else cat "$t/dump.err"; nok "contracts-dump lists the catalogue"; suite_exit; fi

# Every declared row is in the dump, whatever roles its declaration names: the dump takes no
# caller, so a row hidden from one role never reads as removed.
missing=$(python3 - "$t/current.json" server/capabilities/*.json <<'PY'
import json, sys
caps = json.load(open(sys.argv[1]))["capabilities"]
kinds = {"tools": ("tool", "name"), "resources": ("resource", "uri"),
         "templates": ("resourceTemplate", "uri_template"), "prompts": ("prompt", "name")}
for path in sys.argv[2:]:
    d = json.load(open(path))
    for table, (kind, key) in kinds.items():
        for i, row in enumerate(d.get(table, [])):
            if row[key] not in caps.get(kind, {}):
                print(f"{path}: {table}[{i}] {row[key]} (roles {d.get('roles')})")
PY
)
if [[ -z $missing ]]; then ok "contracts-dump lists every declared row, whatever its roles"
else
  # shellcheck disable=SC2001
  sed 's/^/#   /' <<<"$missing"; nok "contracts-dump lists every declared row, whatever its roles"
fi

# expect NAME PATTERN|"" RC SNAPSHOT CURRENT [check|readme DOC]: runs the checker (with the
# previous release's snapshot REL when set); passes when its exit status is RC (0 or non-zero
# "1") and its output matches PATTERN (grep -E).
expect() {
  local name=$1 pat=$2 want=$3 s=$4 c=$5 mode=${6:-check} out rc
  if [[ $mode == readme ]]; then out=$($check readme "$s" "$c" 2>&1); rc=$?
  else out=$($check check "$s" "$c" ${REL:+"$REL"} 2>&1); rc=$?; fi
  if { [[ $want == 0 && $rc == 0 ]] || [[ $want != 0 && $rc != 0 ]]; } &&
     { [[ -z $pat ]] || grep -qE -- "$pat" <<<"$out"; }; then
    ok "$name"
  else
    nok "$name (exit $rc)"
    # shellcheck disable=SC2001
    sed 's/^/#   /' <<<"$out"
  fi
}

# mutate OUT PYTHON: a copy of the real dump as d, changed by PYTHON (c = d's capabilities).
mutate() {
  python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); c = d["capabilities"]
def gov(kind, key): return c[kind][key]["governance"]
def con(kind, key): return c[kind][key]["contract"]
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))' "$t/${base:-current}.json" "$t/$1" "$2"
}

# ---- the real catalogue --------------------------------------------------------------------
expect "the catalogue matches the committed snapshot" "^contracts: [0-9]+ capabilities, 0 changed, 0 failures$" 0 "$snap" "$t/current.json"
prev=$(tr -d '[:space:]' <tests/upgrade/PREVIOUS)
if git show "$prev:tests/contracts/snapshot.json" >"$t/released.json" 2>/dev/null; then
  REL=$t/released.json expect "the catalogue rolls from the previous release (${prev:0:12}): no change since it that a validating client rejects, output objects open" \
    "^contracts: [0-9]+ capabilities, 0 changed, 0 failures$" 0 "$snap" "$t/current.json"
else
  echo "skip - the rolling upgrade from ${prev:0:12}: this checkout does not hold that commit (a shallow clone)"
fi
expect "the capability table of docs/capabilities.md matches the catalogue" ", 0 failures$" 0 "$doc" "$t/current.json" readme

# ---- self-tests: the checker on mutated copies of the dump ---------------------------------
# They start from the real dump with the two tools, their subjects, at version 1.0.0, recorded
# so in a snapshot of their own: they test the checker whatever the tools' real versions are.
mutate base.json "gov('tool','get_bike_status')['version']='1.0.0'; gov('tool','report_damaged_bike')['version']='1.0.0'"
base=base
$check --update "$t/base-snap.json" "$t/base.json" >"$t/base-update.out" 2>&1 || sed 's/^/#   /' "$t/base-update.out"
snap=$t/base-snap.json
bs='con("tool","get_bike_status")'
mutate a.json "s=${bs}['inputSchema']; s['properties']['depot']={'type':'string'}; s['required'].append('depot')"
expect "a required input property without a bump fails, naming the tool and the bump" \
  "get_bike_status: inputSchema changed \(major: property 'depot' added as required\) but version 1\.0\.0 -> 1\.0\.0; bump to 2\.0\.0" 1 "$snap" "$t/a.json"

mutate a2.json "${bs}['outputSchema']['properties']['batteryPct']['type']='string'"
expect "an output type change without a bump fails" "get_bike_status: outputSchema changed \(major: property 'batteryPct' type changed" 1 "$snap" "$t/a2.json"

mutate a3.json "con('tool','report_damaged_bike')['inputSchema']['properties']['issue']['enum'].remove('other'); gov('tool','report_damaged_bike')['version']='1.1.0'"
expect "an input enum narrowed with a minor bump fails" "report_damaged_bike: inputSchema changed \(major: property 'issue' enum narrowed .*1\.0\.0 -> 1\.1\.0; bump to 2\.0\.0" 1 "$snap" "$t/a3.json"

mutate a4.json "con('tool','report_damaged_bike')['annotations']['destructiveHint']=True; gov('tool','report_damaged_bike')['version']='1.0.1'"
expect "a changed destructiveHint is major" "report_damaged_bike: annotations changed \(major: destructiveHint changed from false to true\).*bump to 2\.0\.0" 1 "$snap" "$t/a4.json"

mutate a5.json "con('resourceTemplate','bikaroo://fleet/bikes/{bikeId}')['mimeType']='text/plain'; gov('resourceTemplate','bikaroo://fleet/bikes/{bikeId}')['version']='1.1.0'"
expect "a changed mimeType is major" "resourceTemplate bikaroo://fleet/bikes/\{bikeId\}: mimeType changed \(major" 1 "$snap" "$t/a5.json"

mutate a6.json "con('tool','report_damaged_bike')['inputSchema']['properties']['description']['maxLength']=1000; gov('tool','report_damaged_bike')['version']='1.1.0'"
expect "a shorter input maxLength is major" "property 'description' maxLength narrowed \(2000 -> 1000\).*bump to 2\.0\.0" 1 "$snap" "$t/a6.json"

mutate b.json "s=${bs}['inputSchema']; s['properties']['depot']={'type':'string'}; s['required'].append('depot'); gov('tool','get_bike_status')['version']='2.0.0'"
expect "the same with a major bump but a stale snapshot says to run make contracts" \
  "get_bike_status: .*1\.0\.0 -> 2\.0\.0 is enough.*run make contracts to record it" 1 "$snap" "$t/b.json"
cp "$snap" "$t/b-snap.json"
if $check --update "$t/b-snap.json" "$t/a.json" >"$t/b-update.out" 2>&1 || ! cmp -s "$snap" "$t/b-snap.json"; then
  nok "make contracts refuses to record a change without its bump"; sed 's/^/#   /' "$t/b-update.out"
else ok "make contracts refuses to record a change without its bump"; fi

mutate c.json "${bs}['description'] += ' Wording only.'; ${bs}['inputSchema']['properties']['bikeId']['description']='The id on the frame.'; gov('tool','get_bike_status')['version']='1.0.1'"
cp "$snap" "$t/c-snap.json"
$check --update "$t/c-snap.json" "$t/c.json" >"$t/c-update.out" 2>&1 || sed 's/^/#   /' "$t/c-update.out"
expect "a wording change with a patch bump, recorded, passes" "0 changed, 0 failures" 0 "$t/c-snap.json" "$t/c.json"
mutate c2.json "${bs}['description'] += ' Wording only.'"
expect "a wording change without a bump fails (patch)" "get_bike_status: description changed \(patch: description reworded\).*bump to 1\.0\.1" 1 "$snap" "$t/c2.json"

# Initial development (0.y.z, as make new-capability records a new tool): any change, recorded.
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [c.update(version='0.1.0') for c in d['capabilities'] if c['name']=='get_bike_status']; json.dump(d,open(sys.argv[2],'w'))" "$snap" "$t/z-snap.json"
mutate z2.json "s=${bs}['inputSchema']; s['properties']['depot']={'type':'string'}; s['required'].append('depot'); gov('tool','get_bike_status')['version']='0.1.0'"
expect "a 0.y.z capability may change anything, only needs recording" "get_bike_status: .*0\.1\.0 -> 0\.1\.0 is enough.*run make contracts" 1 "$t/z-snap.json" "$t/z2.json"

mutate m.json "con('tool','report_damaged_bike')['inputSchema']['properties']['priority']={'type':'string'}; gov('tool','report_damaged_bike')['version']='1.0.1'"
expect "a new optional input property with a patch bump fails (minor)" "report_damaged_bike: inputSchema changed \(minor: optional property 'priority' added\).*bump to 1\.1\.0" 1 "$snap" "$t/m.json"
mutate m2.json "${bs}['outputSchema']['properties']['model']={'type':'string'}; gov('tool','get_bike_status')['version']='1.1.0'"
expect "a new optional output property with a minor bump only needs recording" "get_bike_status: outputSchema changed \(minor: optional output property 'model' added\), version 1\.0\.0 -> 1\.1\.0 is enough" 1 "$snap" "$t/m2.json"
REL=$snap expect "... and rolls from a release whose output object is open" "get_bike_status: .*1\.0\.0 -> 1\.1\.0 is enough.*run make contracts" 1 "$snap" "$t/m2.json"
cp "$snap" "$t/m2-snap.json"
$check --update "$t/m2-snap.json" "$t/m2.json" >/dev/null 2>&1
REL=$snap expect "... and once recorded passes, the release beside it" "^contracts: [0-9]+ capabilities, 0 changed, 0 failures$" 0 "$t/m2-snap.json" "$t/m2.json"
mutate m3.json "s=${bs}['outputSchema']; s['properties']['model']={'type':'string'}; s['required'].append('model'); gov('tool','get_bike_status')['version']='2.0.0'"
expect "a new required output property is major: the previous version's answers lack it" "get_bike_status: outputSchema changed \(major: output property 'model' added as required \(a client holding this schema rejects the earlier version's answers without it\)\), version 1\.0\.0 -> 2\.0\.0 is enough" 1 "$snap" "$t/m3.json"
REL=$snap expect "... and even with its major bump cannot roll" "get_bike_status: cannot roll from the previous release's 1\.0\.0: output property 'model' added as required" 1 "$snap" "$t/m3.json"
mutate m4.json "${bs}['outputSchema']['required'].remove('openCaseId'); gov('tool','get_bike_status')['version']='1.1.0'"
expect "an output property no longer always present is major" "get_bike_status: outputSchema changed \(major: output property 'openCaseId' no longer always present.*bump to 2\.0\.0" 1 "$snap" "$t/m4.json"
mutate m5.json "${bs}['outputSchema']['properties']['batteryPct']['type']='integer'; gov('tool','get_bike_status')['version']='1.1.0'"
expect "an output type narrowed is major (a client holding it rejects the previous version's nulls)" "property 'batteryPct' type narrowed to \"integer\" \(a client holding this schema rejects the earlier version's answers\).*bump to 2\.0\.0" 1 "$snap" "$t/m5.json"

# Outputs stay open; a property added where the previous release closed the object cannot roll.
mutate o1.json "${bs}['outputSchema']['additionalProperties']=False; gov('tool','get_bike_status')['version']='1.1.0'"
expect "a closed output object fails, whatever the bump" "get_bike_status: its outputSchema closes the object at the schema root \(additionalProperties false\)" 1 "$snap" "$t/o1.json"
mutate o2.json "${bs}['outputSchema']['properties']['batteryPct']['additionalProperties']=False; gov('tool','get_bike_status')['version']='1.1.0'"
expect "... at any depth" "get_bike_status: its outputSchema closes the object at property 'batteryPct'" 1 "$snap" "$t/o2.json"
mutate o3.json "${bs}['outputSchema']['properties']['model']={'type':'string'}; gov('tool','get_bike_status')['version']='1.1.0'"
mutate m0.json "gov('tool','get_bike_status')['version']='1.1.0'"
# The snapshot of a release that published the output closed (as 68427ec did).
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [c['contract']['outputSchema'].update(additionalProperties=False) for c in d['capabilities'] if c['name']=='get_bike_status']; json.dump(d,open(sys.argv[2],'w'))" "$snap" "$t/closed-snap.json"
REL=$t/closed-snap.json expect "an optional output property added where the previous release closed the object cannot roll" \
  "get_bike_status: cannot roll from the previous release's 1\.0\.0: output property 'model' added to an object the earlier version closed \(a client holding the earlier schema rejects this version's answers\)" 1 "$t/closed-snap.json" "$t/o3.json"
REL=$t/closed-snap.json expect "... while opening that object, and nothing else, rolls" "get_bike_status: outputSchema changed \(minor: output object at the schema root opened\), version 1\.0\.0 -> 1\.1\.0 is enough" 1 "$t/closed-snap.json" "$t/m0.json"

# A version the snapshot records above the previous release's is not released: a change to it is
# judged from the release (what clients may hold), not from that record.
$check --update "$t/u-snap.json" "$t/m2.json" >/dev/null 2>&1 # 1.1.0 with 'model', not released
mutate u.json "gov('tool','get_bike_status')['version']='1.1.0'"
expect "without the release, taking back an unreleased property is major" "get_bike_status: outputSchema changed \(major: property 'model' removed.*bump to 2\.0\.0" 1 "$t/u-snap.json" "$t/u.json"
REL=$snap expect "with it, the change is judged from the release: 1.1.0 stays enough" "get_bike_status: .* since the previous release, version 1\.0\.0 -> 1\.1\.0 is enough.*run make contracts" 1 "$t/u-snap.json" "$t/u.json"
REL=$t/none.json expect "without the previous release's snapshot, the check says so and judges from the snapshot" "no snapshot of the previous release" 1 "$t/u-snap.json" "$t/u.json"

mutate d.json "g=gov('tool','get_bike_status'); g['lifecycle']='deprecated'; g['replacement']='bikaroo://fleet/bikes/{bikeId}'; g['version']='1.1.0'"
expect "a deprecated capability without a sunset fails" "get_bike_status: deprecated without a sunset date" 1 "$snap" "$t/d.json"
mutate d2.json "g=gov('tool','get_bike_status'); g['lifecycle']='deprecated'; g['sunset']='2030-01-31'; g['version']='1.1.0'"
expect "a deprecated capability without a replacement fails" "get_bike_status: deprecated without a replacement" 1 "$snap" "$t/d2.json"
mutate d3.json "g=gov('tool','get_bike_status'); g['lifecycle']='deprecated'; g['sunset']='2030-01-31'; g['replacement']='bikaroo://fleet/bikes/{bikeId}'"
expect "deprecating without a minor bump fails" "get_bike_status: lifecycle changed \(minor: lifecycle stable -> deprecated\).*bump to 1\.1\.0" 1 "$snap" "$t/d3.json"

mutate e.json "del c['tool']['get_bike_status']"
expect "a stable capability removed fails" "get_bike_status: removed or renamed \(major\).*deprecated capabilities keep working until their sunset" 1 "$snap" "$t/e.json"
# A snapshot that recorded it deprecated with a sunset: removable after the sunset, not before.
mutate e-dep.json "g=gov('tool','get_bike_status'); g['lifecycle']='deprecated'; g['sunset']='2030-01-31'; g['replacement']='bikaroo://fleet/bikes/{bikeId}'; g['version']='1.1.0'"
$check --update "$t/e-snap.json" "$t/e-dep.json" >"$t/e-update.out" 2>&1 || sed 's/^/#   /' "$t/e-update.out"
CONTRACTS_TODAY=2030-01-15 expect "a deprecated capability removed before its sunset fails" "get_bike_status: removed from the catalogue \(major\) before its sunset 2030-01-31: deprecated capabilities keep working until their sunset" 1 "$t/e-snap.json" "$t/e.json"
CONTRACTS_TODAY=2030-02-01 expect "a deprecated capability removed after its sunset only needs recording" "get_bike_status: removed after its sunset 2030-01-31: run make contracts" 1 "$t/e-snap.json" "$t/e.json"

# ---- self-tests: the output rule against the official client's validator -------------------
while IFS= read -r line; do
  case $line in
  "ok - "*) ok "rule: ${line#ok - }" ;;
  "not ok - "*) nok "rule: ${line#not ok - }" ;;
  *) echo "$line" ;;
  esac
done < <(python3 tests/contracts/rule.py 2>&1)

# ---- self-tests: the capability table check ------------------------------------------------
# shellcheck disable=SC2016 # the backticks are the table's, not an expansion
sed -E '/^\| *`?tool`? *\| *`?get_bike_status`? *\|/ s/\| *[0-9]+\.[0-9]+\.[0-9]+ *\|/| 9.9.9 |/' "$doc" >"$t/doc-version.md"
expect "a table row with a wrong version fails" "get_bike_status: version '9\.9\.9' in the table, '[0-9.]+' in the catalogue" 1 "$t/doc-version.md" "$t/current.json" readme
# shellcheck disable=SC2016
grep -vE '^\| *`?prompt`? *\|' "$doc" >"$t/doc-missing.md"
expect "a table without a capability's row fails" "investigate-damaged-bike .*missing from the capability table" 1 "$t/doc-missing.md" "$t/current.json" readme
mutate e2.json "del c['tool']['report_damaged_bike']"
expect "a table row of a capability the catalogue no longer has fails" "report_damaged_bike is not in the catalogue" 1 "$doc" "$t/e2.json" readme
suite_exit
