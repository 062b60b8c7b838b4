#!/usr/bin/env bash
# The layer arrows: scripts/arrows.py on the real tree, then its self-test: a tiny fake tree laid
# out like the real layers passes, and each kind of finding (forbidden include, module cycle,
# business word in protocol/...) fails with the file, line or cycle named. The same for the code
# map (scripts/codemap.py), the paths comments cite (scripts/stale.py) and the defaults the docs
# state (scripts/defaults.py, against the build given); then the mutable globals of that build
# (scripts/globals.sh). No database.
# Prints `ok - ...` / `not ok - ...`; exits 1 on any failure.
# shellcheck disable=SC2016  # the fake trees' lines are written as they are, backticks and $ too
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
arrows="$(cd "$(dirname "$0")/../.." && pwd)/scripts/arrows.py"
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"

# verdict NAME EXPECTED-EXIT EXPECTED-TEXT COMMAND...: `ok - NAME` when COMMAND exits as expected
# and prints the text, else `not ok - NAME` and its output; returns 1 then.
verdict() {
  local out rc
  out=$("${@:4}" 2>&1)
  rc=$?
  if [[ $rc == "$2" ]] && grep -qF -- "$3" <<<"$out"; then ok "$1"; return 0; fi
  nok "$1 (exit $rc, wanted $2 and: $3)"
  printf '#   %s\n' "${out//$'\n'/$'\n'#   }"
  return 1
}
# planted DIR TREE [FILE LINE...]: DIR becomes a copy of the fake TREE, the lines appended to FILE.
planted() {
  cp -r "$2/." "$1"
  (($# > 2)) && mkdir -p "$(dirname "$1/$3")" && printf '%s\n' "${@:4}" >>"$1/$3"
}

if python3 "$arrows" >"$t/tree.out" 2>&1; then ok "the tree keeps its layer arrows, no include cycle"
else sed 's/^/# /' "$t/tree.out"; nok "the tree breaks its layer arrows (make lint says where)"; fi

put() { # put PATH LINE...: write a file of the fake tree, one argument per line
  local path="$t/clean/$1"
  shift
  mkdir -p "$(dirname "$path")"
  printf '%s\n' "$@" >"$path"
}

put common/mem.h '#include <stddef.h>' 'void *mem_alloc(size_t n);'
put common/mem.c '#include "mem.h"' '#include <stdlib.h>'
put domain/types.h '/* fleet:read */' 'enum fleet_status { FLEET_OK };' '#define FLEET_BIKE_ID_MAX 16'
put domain/pg/db.h '#include <libpq-fe.h>' '#include "domain/types.h"'
put domain/pg/db.c '#include "db.h"' '#include "common/mem.h"'
put domain/bikes.h '#include "types.h"'
put domain/bikes.c '#include "bikes.h"' '#include "domain/pg/db.h"' '#include "../common/mem.h"'
put server/protocol/mcp.h '#ifndef MCP_H' '#define MCP_H' '#include "domain/types.h"' '#endif'
put server/protocol/mcp.c '#include "mcp.h"' '#include "common/mem.h"' \
  'static char id[FLEET_BIKE_ID_MAX]; /* a buffer sized by the types header */' \
  'enum fleet_status mcp_status(void) { return FLEET_OK; }'
put server/protocol/methods.h '#include "mcp.h"'
put server/protocol/methods.c '#include "methods.h"' '#include "server/protocol/mcp.h"'
put server/auth/jwt.h '#include "domain/types.h"'
put server/auth/jwt.c '#include "jwt.h"' '#include <curl/curl.h>' '#include "common/mem.h"'
put server/transport/http.h '#include "domain/types.h"'
put server/transport/http.c '#include "http.h"' '#include <microhttpd.h>' \
  '#include "server/protocol/methods.h"' '#include "../auth/jwt.h"'
put server/capabilities/adapter.h '#include "server/protocol/mcp.h"'
put server/capabilities/adapter.c '#include "adapter.h"' '#include "domain/bikes.h"'
put server/capabilities/bike_status.h '#include "adapter.h"'
put server/capabilities/bike_status.c '#include "bike_status.h"' '#include "adapter.h"' '#include "domain/bikes.h"'
put server/capabilities/cases.h '#include "adapter.h"'
put server/capabilities/cases.c '#include "cases.h"'
put server/capabilities/catalog.h '#include "server/protocol/mcp.h"'
put server/capabilities/catalog.c '#include "catalog.h"' '#include "bike_status.h"' '#include "cases.h"'
put server/cfg.h '#include <stdbool.h>'
put server/cfg.c '#include "cfg.h"'
put server/cli/cli.h '#include "server/cfg.h"'
put server/cli/cli.c '#include "cli.h"' '#include "domain/pg/db.h"'
put server/main.c '#include "cfg.h"' '#include "server/cli/cli.h"' '#include "domain/pg/db.h"' '#include "server/capabilities/catalog.h"' \
  '#include "server/transport/http.h"' '#include <curl/curl.h>'
put tests/unit/anything.c '#include "server/capabilities/bike_status.h"' '#include <libpq-fe.h>'

# case_ NAME EXPECTED-EXIT EXPECTED-TEXT [FILE LINE...]: on a copy of the clean tree with the lines
# appended to FILE (when given), the script must exit as expected and print the text. Cases run
# in parallel (Python's start-up dominates); their verdicts are printed in order at the end.
cases=()
case_() {
  local dir
  dir=$(mktemp -d "$t/case.XXXXXX")
  cases+=("$dir")
  mkdir "$dir/tree"
  planted "$dir/tree" "$t/clean" "${@:4}"
  verdict "$1" "$2" "$3" python3 "$arrows" --root "$dir/tree" >"$dir/verdict" &
}

case_ "a clean tree passes" 0 \
  "0 forbidden includes, 0 cycles, 0 business words in protocol/, 0 files over their size, 0 forbidden words, 0 concurrency rules broken"
case_ "a transport file over 600 lines fails, naming it" 1 \
  "server/transport/http.c: 604 lines, over the 600 of a file of server/transport/ (split it along its concerns: a module of its own in server/transport/)" \
  server/transport/http.c $(seq -f 'x%g;' 1 600)
case_ "server/main.c over 300 lines fails, naming it and where commands go" 1 \
  "server/main.c: 306 lines, over the 300 of server/main.c (split it along its concerns: a command, or a part of serve, in server/cli/)" \
  server/main.c $(seq -f 'x%g;' 1 300)
case_ "server/main.c at 300 lines passes" 0 "0 files over their size" \
  server/main.c $(seq -f 'x%g;' 1 294)
case_ "server/cfg.c over 700 lines fails" 1 \
  "server/cfg.c: 701 lines, over the 700 of a .c file at the root of server/ (split it along its concerns: a command's code in server/cli/" \
  server/cfg.c $(seq -f 'x%g;' 1 700)
case_ "any other .c file at the root of server/ over 700 lines fails" 1 \
  "server/settings_file.c: 701 lines, over the 700 of a .c file at the root of server/" \
  server/settings_file.c $(seq -f 'x%g;' 1 701)
case_ "a file of server/cli/ is not held to the root's 700" 0 "0 files over their size" \
  server/cli/cli.c $(seq -f 'x%g;' 1 800)
case_ "a file of domain/pg/ over 700 lines fails, naming where the code goes" 1 \
  "domain/pg/db.c: 702 lines, over the 700 of a file of domain/pg/ (split it along its concerns: a module of its own in domain/pg/ (libpq plumbing), the business in domain/)" \
  domain/pg/db.c $(seq -f 'x%g;' 1 700)
case_ "a file of domain/ itself is not held to domain/pg/'s 700" 0 "0 files over their size" \
  domain/bikes.c $(seq -f 'x%g;' 1 800)
case_ "a command of server/cli/ may include what main includes" 0 "0 forbidden includes" \
  server/cli/cli.c '#include "server/capabilities/catalog.h"' '#include "domain/bikes.h"'
case_ "a capability including server/cli/ fails" 1 \
  "server/capabilities/cases.c:2: forbidden include of server/cli/cli.h (layer capabilities -> layer cli)" \
  server/capabilities/cases.c '#include "server/cli/cli.h"'
case_ "a protocol header over 200 lines fails" 1 \
  "server/protocol/mcp.h: 204 lines, over the 200 of a header of server/protocol/ (split it along its concerns: a header of its own in server/protocol/" \
  server/protocol/mcp.h $(seq -f 'x%g;' 1 200)
case_ "a product row that skips schema checking fails" 1 \
  "server/capabilities/cases.c:2: schema_listed_only" \
  server/capabilities/cases.c 'static const struct tool_desc t = {.schema_listed_only = true};'
case_ "the generated capabilities header outside capabilities fails" 1 \
  "server/protocol/mcp.c:5: forbidden include of generated gen/capabilities.h" \
  server/protocol/mcp.c '#include "gen/capabilities.h"'
case_ "the generated capabilities header in a capability passes" 0 "0 forbidden includes" \
  server/capabilities/cases.c '#include "gen/capabilities.h"'
case_ "the generated schema version in domain/pg/ passes" 0 "0 forbidden includes" \
  domain/pg/db.c '#include "gen/schema_version.h"'
case_ "the generated schema version outside domain/pg/ fails: migrate.h's function says it" 1 \
  "server/cli/cli.c:3: forbidden include of generated gen/schema_version.h" \
  server/cli/cli.c '#include "gen/schema_version.h"'
case_ "protocol including a capability fails, naming file and line" 1 \
  "server/protocol/methods.c:3: forbidden include of server/capabilities/cases.h (layer protocol -> layer capabilities)" \
  server/protocol/methods.c '#include "server/capabilities/cases.h"'
case_ "a relative include out of protocol is resolved and refused" 1 \
  "server/protocol/mcp.c:5: forbidden include of domain/bikes.h (layer protocol -> layer domain)" \
  server/protocol/mcp.c '#include "../../domain/bikes.h"'
case_ "a capability including another capability fails" 1 \
  "server/capabilities/cases.c:2: forbidden include of server/capabilities/bike_status.h" \
  server/capabilities/cases.c '#include "bike_status.h"'
case_ "libpq outside domain/ fails" 1 \
  "server/transport/http.c:5: forbidden include of <libpq-fe.h> (layer transport -> libpq)" \
  server/transport/http.c '#include <libpq-fe.h>'
case_ "domain including server/ fails" 1 \
  "domain/bikes.c:4: forbidden include of server/protocol/mcp.h (layer domain -> layer protocol)" \
  domain/bikes.c '#include "server/protocol/mcp.h"'
case_ "an unresolvable quoted include fails" 1 \
  'common/mem.c:3: unresolved include "nowhere.h"' \
  common/mem.c '#include "nowhere.h"'
case_ "a two-module include cycle fails, naming the cycle" 1 \
  "include cycle: server/protocol/mcp -> server/protocol/methods -> server/protocol/mcp" \
  server/protocol/mcp.c '#include "methods.h"'
case_ "a business word in a protocol comment fails" 1 \
  "server/protocol/mcp.c:5: protocol knows a business word: bikes" \
  server/protocol/mcp.c '/* lists the bikes */'
case_ "a thread-local in the domain fails: a call's state lives in its task" 1 \
  "domain/bikes.c:4: _Thread_local outside common/loop.c" \
  domain/bikes.c 'static _Thread_local char sqlstate[6];'
case_ "a pthread condition wait in a transport fails: it would hold the loop" 1 \
  "server/transport/http.c:5: pthread_cond_wait outside anywhere" \
  server/transport/http.c 'void f(void) { pthread_cond_wait(&c, &m); }'
case_ "a blocking libcurl transfer in the authorization module fails: it would hold the loop" 1 \
  "server/auth/jwt.c:4: curl_easy_perform outside common/otlp.c" \
  server/auth/jwt.c 'CURLcode f(CURL *c) { return curl_easy_perform(c); }'
case_ "a lock on a span's way to the exporter's queue fails: a call would wait for the exporter" 1 \
  "common/otlp.c:1: pthread_mutex (the span queue is lock-free" \
  common/otlp.c 'static pthread_mutex_t otlp_lock = PTHREAD_MUTEX_INITIALIZER;'
case_ "the words in a comment are no rule broken" 0 "0 concurrency rules broken" \
  server/transport/http.c '/* never pthread_cond_wait here, nor _Thread_local */'
case_ "a scope string in protocol fails" 1 \
  "server/protocol/methods.c:3: protocol knows a business word: fleet:read" \
  server/protocol/methods.c 'static const char *scope = "fleet:read";'

# The code map (scripts/codemap.py): the real server/README.md names every .c of server/ and
# domain/; on a fake tree, a file left out, a name whose file is gone, and a file named under
# another folder each fail, naming the file.
codemap="$(cd "$(dirname "$0")/../.." && pwd)/scripts/codemap.py"
if python3 "$codemap" >"$t/codemap.out" 2>&1; then ok "server/README.md's code map names every .c file of server/ and domain/"
else sed 's/^/# /' "$t/codemap.out"; nok "server/README.md's code map is not true (make lint says which file)"; fi
map_case() { # map_case NAME EXPECTED-EXIT EXPECTED-TEXT MAP-LINE...: the fake tree with that map
  local dir
  dir=$(mktemp -d "$t/map.XXXXXX")
  mkdir -p "$dir/server/transport" "$dir/domain/pg"
  touch "$dir/server/main.c" "$dir/server/transport/http.c" "$dir/domain/bikes.c" "$dir/domain/pg/db.c"
  { echo '# Code map'; echo '```'; printf '%s\n' "${@:4}"; echo '```'; } >"$dir/server/README.md"
  verdict "$1" "$2" "$3" python3 "$codemap" --root "$dir"
}
full=('server/main.c            the root' 'server/transport/        bytes' '  http.c                   HTTP'
  'domain/                  the business' '  bikes.c                  bikes' '  pg/                      plumbing' '    db.c                   db')
map_case "a code map naming every file passes" 0 "0 not in the map, 0 named but missing" "${full[@]}"
map_case "a .c file the map leaves out fails, naming it" 1 \
  "server/README.md: domain/pg/db.c is not in the code map" "${full[@]:0:6}"
map_case "a map naming a file that is gone fails, naming it" 1 \
  "code map line 4 names server/transport/gone.c, which does not exist" \
  "${full[@]:0:3}" '  gone.c                   gone' "${full[@]:3}"
map_case "a file named under another folder does not count" 1 \
  "server/README.md: domain/bikes.c is not in the code map" \
  'server/main.c            the root' 'server/transport/        bytes' '  http.c bikes.c           HTTP' \
  'domain/                  the business' '  pg/                      plumbing' '    db.c                   db'

# Comments cite what exists (scripts/stale.py): the real tree, then a fake one (a git work tree,
# as the script reads git's file list) where what is no path passes and each kind of comment
# citing a file that is gone fails, naming file, line and path.
stale="$(cd "$(dirname "$0")/../.." && pwd)/scripts/stale.py"
if python3 "$stale" >"$t/stale.out" 2>&1; then ok "no comment cites a path that does not exist, no text a retired phrase"
else sed 's/^/# /' "$t/stale.out"; nok "comments cite paths that do not exist, or a text a retired phrase (make lint says where)"; fi
st=$t/stale-clean
sput() { # sput PATH LINE...: a file of the fake tree, one argument per line
  local path="$st/$1"
  shift
  mkdir -p "$(dirname "$path")"
  printf '%s\n' "$@" >"$path"
}
sput .gitignore 'docker/secrets/' 'node_modules/'
sput common/loop.h '/* The loop (loop.c, common/loop.c, ../common/loop.h); https://example.org/common/gone.c */'
sput common/loop.c '// build/gen/schemas.h, $(B)/gen/x.h and gen/schemas.h are the build'"'"'s' 'int x = 1;'
sput server/transport/http.c '/* server/discover is a method; tests/NAME/suite.sh a pattern, docs/*.txt a glob */' \
  'static const char *s = "server/gone.c: a string, not a comment";'
sput docs/a.txt 'A'
sput scripts/x.sh '#!/usr/bin/env bash' '# writes docker/secrets/tls_ca (git ignores it), reads common/loop.c' \
  'cat <<EOF' '# server/gone.c: a line of a here-document' 'EOF' 'echo "# server/gone.c, quoted" ${#x}'
sput scripts/y.py '"""y.py: reads docs/a.txt."""' 'x = "# docs/gone.txt, quoted"  # and common/loop.h'
sput migrations/0001_a.sql '-- 0001: migrations/README.md' "SELECT '-- migrations/gone.sql';"
sput migrations/README.md '# M'
sput Makefile '# scripts/x.sh, scripts/y.py'
git init -q "$st"
stale_case() { # stale_case NAME EXPECTED-EXIT EXPECTED-TEXT [FILE LINE...]: the lines appended to FILE
  local dir
  dir=$(mktemp -d "$t/stale.XXXXXX")
  planted "$dir" "$st" "${@:4}"
  verdict "$1" "$2" "$3" python3 "$stale" --root "$dir"
}
stale_case "stale.py: URLs, strings, the build's paths, methods, patterns, ignored and quoted text are no citation" \
  0 "11 paths cited, 0 that do not exist"
stale_case "stale.py: a C comment citing a file that is gone fails, naming file, line and path" 1 \
  "server/transport/http.c:3: cites server/transport/http_work.c, which does not exist" \
  server/transport/http.c '/* admission (server/transport/http_work.c) */'
stale_case "stale.py: a // comment citing a file that is gone fails" 1 \
  "common/loop.c:3: cites common/deadline.c, which does not exist" common/loop.c '// see common/deadline.c.'
stale_case "stale.py: a bare file name found nowhere fails" 1 \
  "common/loop.h:2: cites deadline.h, which does not exist" common/loop.h '/* with deadline.h */'
stale_case "stale.py: a relative file name is read from the file's folder" 1 \
  "server/transport/http.c:3: cites ../common/loop.h, which does not exist" \
  server/transport/http.c '/* ../common/loop.h is not server/common/loop.h */'
stale_case "stale.py: a folder that is gone fails" 1 \
  "common/loop.h:2: cites server/auth/, which does not exist" common/loop.h '/* server/auth/ */'
stale_case "stale.py: a shell comment citing a file that is gone fails" 1 \
  "scripts/x.sh:7: cites docs/foo.txt, which does not exist" scripts/x.sh 'true # as docs/foo.txt says'
stale_case "stale.py: a Makefile comment citing a file that is gone fails" 1 \
  "Makefile:2: cites scripts/gone.sh, which does not exist" Makefile '# scripts/gone.sh'
stale_case "stale.py: a Python docstring citing a file that is gone fails" 1 \
  "scripts/y.py:4: cites docs/gone.txt, which does not exist" scripts/y.py 'def f():' '    """f: docs/gone.txt."""'
stale_case "stale.py: an SQL comment citing a function file that is gone fails" 1 \
  "migrations/0001_a.sql:3: cites migrations/functions/fleet.x.sql, which does not exist" \
  migrations/0001_a.sql 'SELECT 1; -- migrations/functions/fleet.x.sql'
# The one recipe for adding a capability (scripts/recipe.py): the tree's says what make
# new-capability writes and runs, and the pages about adding one link to it; a recipe that
# forgets a file the scaffold writes, names one it does not, or a page that lost its link, fails.
recipe="$(cd "$(dirname "$0")/../.." && pwd)/scripts/recipe.py"
if python3 "$recipe" >"$t/recipe.out" 2>&1; then ok "the recipe says what make new-capability writes and runs; the pages link to it"
else sed 's/^/# /' "$t/recipe.out"; nok "the recipe and make new-capability disagree (make lint says where)"; fi
rc_tree() { # rc_tree DIR: the files recipe.py reads, copied from the tree
  local f
  for f in server/capabilities/README.md scripts/new-capability.sh docs/contributing.md server/README.md \
    docs/architecture.md docs/capabilities.md; do
    mkdir -p "$1/$(dirname "$f")" && cp "$(dirname "$recipe")/../$f" "$1/$f"
  done
}
d=$(mktemp -d "$t/recipe.XXXXXX") && rc_tree "$d"
sed -i '/^- `migrations\/NNNN_NAME.sql`: the table it writes/,/fleet.current_may_report()`.$/d' "$d/server/capabilities/README.md"
verdict "recipe.py: a recipe that forgets a file the scaffold writes fails, naming it" 1 \
  '"## Adding a write" does not say that it writes migrations/NNNN_NAME.sql' python3 "$recipe" --root "$d"
d=$(mktemp -d "$t/recipe.XXXXXX") && rc_tree "$d"
sed -i 's|^make e2e FILE=NAME$|make e2e FILE=modern-client|' "$d/server/capabilities/README.md"
verdict "recipe.py: a recipe whose commands are not the scaffold's fails" 1 \
  "make new-capability says to run" python3 "$recipe" --root "$d"
d=$(mktemp -d "$t/recipe.XXXXXX") && rc_tree "$d"
sed -i 's|\](\.\./server/capabilities/README.md)|](../server/README.md)|' "$d/docs/contributing.md"
verdict "recipe.py: a page about adding a capability that does not link to the recipe fails" 1 \
  "docs/contributing.md: adding a capability is server/capabilities/README.md's: link to it" \
  python3 "$recipe" --root "$d"
stale_case "stale.py: the recipe before the declarations (a capability's schema files) fails" 1 \
  "docs/a.txt:2: says \"capabilities/schem""as/\", which is gone: a tool's schemas are in its declaration" \
  docs/a.txt 'Its schemas live in server/capabilities/schem''as/NAME.input.json.'
# Every object that includes the generated gen/capabilities.h is compiled after the build
# generated it, from an empty build directory too (on a fresh clone, make new-capability's
# `make contracts` compiled tests/contracts/dump.c before the header existed, and failed).
late=()
for src in $(grep -rlF --include='*.c' '#include "gen/capabilities.h"' server tests); do
  plan=$(MAKEFLAGS= make -n --no-print-directory B="$t/nob" "$t/nob/${src%.c}.o" 2>&1)
  g=$(grep -n -m1 -F "capgen $t/nob/gen " <<<"$plan" | cut -d: -f1)
  c=$(grep -n -m1 -F -- "-c $src " <<<"$plan" | cut -d: -f1)
  [[ -n $g && -n $c && $g -lt $c ]] || late+=("$src")
done
if ((${#late[@]} == 0)); then ok "every object including gen/capabilities.h is built after it, from an empty build directory"
else nok "built before gen/capabilities.h from an empty build directory (give the object the header as a prerequisite in the Makefile): ${late[*]}"; fi
# The tree's own .gitignore hides only what the build and runs write: a citation of a file of a
# folder merely named like the build's (tests/build/) that does not exist is found, not excused
# as made (it was, when build/ hid every folder of that name).
d=$(mktemp -d "$t/stale.XXXXXX")
planted "$d" "$st" Makefile '# tests/build/suite.sh checks it'
cp "$(dirname "$stale")/../.gitignore" "$d/.gitignore"
mkdir -p "$d/tests" && echo '# tests/' >"$d/tests/README.md"
verdict "stale.py: with the tree's .gitignore, a missing tests/build/suite.sh is named" 1 \
  "Makefile:2: cites tests/build/suite.sh, which does not exist" python3 "$stale" --root "$d"
# A retired phrase (the audit's former mechanism; written in two pieces here, or this very file
# would say it) fails in docs, code and metric help alike, and is history in bench/RESULTS.md.
stale_case "stale.py: a doc describing the audit's former mechanism fails, saying what is true now" 1 \
  "docs/a.txt:2: says \"Group"" commit\", which is gone: a read's audit rows are written with the read" \
  docs/a.txt 'Group'' commit writes the rows.'
stale_case "stale.py: so does a metric's help text in code" 1 \
  "common/loop.c:3: says \"group""-commit\", which is gone" \
  common/loop.c 'static const char *help = "audit rows per group''-commit";'
stale_case "stale.py: bench/RESULTS.md keeps its history" 0 "0 retired phrases said" \
  bench/RESULTS.md 'The group'' commit of the time: 5.3k/s.'

# The defaults the docs state are config-help's (scripts/defaults.py): the real docs against the
# build under test, then fake pages against a fake binary printing a table of three settings.
defaults="$(cd "$(dirname "$0")/../.." && pwd)/scripts/defaults.py"
if python3 "$defaults" "$B/bikaroo-mcp" >"$t/defaults.out" 2>&1; then
  ok "every default the docs state is config-help's ($(sed -n 's/^defaults: [0-9]* pages, \([0-9]*\) defaults stated.*/\1/p' "$t/defaults.out") stated)"
else sed 's/^/# /' "$t/defaults.out"; nok "the docs state defaults that are not config-help's (make lint says where)"; fi
df=$t/defaults-clean
mkdir -p "$df/docs"
printf '%s\n' '#!/bin/sh' "cat <<'EOF'" '| variable | flag | default | meaning |' '|---|---|---|---|' \
  '| `BIKAROO_DRAIN_MS` | `--drain-ms=` | `10000` | drain |' '| `BIKAROO_RATE_STORE` | `--rate-store=` | `database` | store |' \
  '| `BIKAROO_MAX_CONNECTIONS` | `--max-connections=` | `1024` | connections |' 'EOF' >"$t/fake-mcp"
chmod +x "$t/fake-mcp"
printf '%s\n' 'At most `BIKAROO_MAX_CONNECTIONS` (1,024; more wait), drained in `BIKAROO_DRAIN_MS`, 10 s;' \
  'budgets in the database (`BIKAROO_RATE_STORE=database`, the default). `BIKAROO_DRAIN_MS` (10' 's) across a line.' \
  '`BIKAROO_MAX_CONNECTIONS` (4 in the test) is no default.' '```sh' 'BIKAROO_DRAIN_MS=5 # `BIKAROO_DRAIN_MS` (5 s)' '```' \
  '<!-- generated: bikaroo-mcp config-help --format=markdown -->' '| `BIKAROO_DRAIN_MS` (1) |' '<!-- end of generated table -->' \
  >"$df/docs/limits.md"
echo '# Fake' >"$df/README.md"
defaults_case() { # defaults_case NAME EXPECTED-EXIT EXPECTED-TEXT [PAGE LINE...]: lines appended to PAGE
  local dir
  dir=$(mktemp -d "$t/defaults.XXXXXX")
  planted "$dir" "$df" "${@:4}"
  verdict "$1" "$2" "$3" python3 "$defaults" "$t/fake-mcp" --root "$dir"
}
defaults_case "defaults.py: defaults stated as config-help's pass; code blocks, the pasted table and the rest are not read" \
  0 "2 pages, 4 defaults stated of 3 settings, 0 not config-help's"
defaults_case "defaults.py: a time stated in another unit than config-help's fails, naming both values and file:line" 1 \
  "docs/limits.md:11: BIKAROO_DRAIN_MS: the page says 15 s, that is 15000 in its own unit; config-help says 10000" \
  docs/limits.md 'Drained within `BIKAROO_DRAIN_MS` (15 s).'
defaults_case "defaults.py: a count that is not the default fails" 1 \
  "README.md:2: BIKAROO_MAX_CONNECTIONS: the page says 2,048, config-help says 1024" \
  README.md 'At most `BIKAROO_MAX_CONNECTIONS` (2,048).'
defaults_case "defaults.py: a word that is not the default fails" 1 \
  "docs/limits.md:11: BIKAROO_RATE_STORE: the page says 'local', config-help says 'database'" \
  docs/limits.md 'Each its own (`BIKAROO_RATE_STORE=local`, the default).'
defaults_case "defaults.py: a unit that does not fit the setting fails" 1 \
  "README.md:2: BIKAROO_MAX_CONNECTIONS: the page says 1 MiB, MiB is no unit of BIKAROO_MAX_CONNECTIONS" \
  README.md 'Up to `BIKAROO_MAX_CONNECTIONS` (1 MiB).'
defaults_case "defaults.py: a setting config-help does not know fails" 1 \
  "README.md:2: BIKAROO_GONE_MS: the page says 5 s, config-help knows no BIKAROO_GONE_MS" \
  README.md 'Gone after `BIKAROO_GONE_MS` (5 s).'

# Mutable process-wide variables in protocol/, capabilities/, transport/: none in the build under
# test (scripts/globals.sh), and the check itself finds one in an object made to have it.
if scripts/globals.sh "$B" >"$t/globals.out" 2>&1; then ok "no mutable process-wide variable in protocol/, capabilities/, transport/"
else sed 's/^/# /' "$t/globals.out"; nok "a mutable process-wide variable in protocol/, capabilities/ or transport/"; fi
mkdir -p "$t/gb/server/protocol" "$t/gb/server/capabilities" "$t/gb/server/transport"
printf 'static int hits;\nint seen(void) { return ++hits; }\nconst char *const names[] = {"a"};\n' >"$t/gb.c"
cc -c -o "$t/gb/server/protocol/x.o" "$t/gb.c"
for d in capabilities transport; do cp "$t/gb/server/protocol/x.o" "$t/gb/server/$d/"; done
if out=$(scripts/globals.sh "$t/gb" 2>&1); then
  nok "globals.sh finds a static counter"
elif grep -q 'server/protocol/x.o: mutable process-wide variable hits' <<<"$out" && ! grep -q names <<<"$out"; then
  ok "globals.sh finds a static counter, not a const table"
else
  printf '# %s\n' "$out"; nok "globals.sh names the counter and only it"
fi

wait
for dir in "${cases[@]}"; do
  cat "$dir/verdict"
  grep -q '^not ok' "$dir/verdict" && failures=$((failures + 1))
done
suite_exit
