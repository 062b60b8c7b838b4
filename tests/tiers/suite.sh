#!/usr/bin/env bash
# tests/tiers/suite.sh: the sizes the docs give for each tier of scripts/deps.sh are apt's (tiers.py
# docs); the run tier of scripts/deps.sh is enough for `make run`, and the idp tier
# for `BIKAROO_AUTH=jwt make run`. Each is traced whole (strace -f: every file opened or executed,
# from a fresh build directory through the first get_bike_status answer), and every file traced
# must belong to a package of the tier's closure or of the base system (tiers.py check): a
# package the run path needs but its tier lacks fails here, naming the file that needed it. The
# jwt run serves with the test lab (tests/node_modules) hidden. Prints `ok - ` / `not ok - ` lines.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
chmod 755 "$t"
run_pid=
# stop_run [NAME]: the traced make run (run_pid, its whole process group: setsid) stopped; then,
# at the suite's end (no NAME), every cluster left. make run stops its cluster on TERM. strace
# follows every process of the run, the cluster's too, and ends only with the last: should the
# cluster (pg-NAME) outlive the run by 30 s, it is stopped here, so that a run that left it can
# never hold the suite for ever.
# shellcheck disable=SC2317  # invoked at the end (suite_on_exit) too
stop_run() {
  if [[ -n "$run_pid" ]]; then
    kill -TERM -- "-$run_pid" 2>/dev/null
    for _ in $(seq 1 300); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$run_pid" 2>/dev/null; then
      echo "# make run (${1:-at the end}): its traced processes still ran 30 s after TERM; the suite stops its cluster"
      scripts/pgtmp.sh destroy "$t/pg-${1:-}" >/dev/null 2>&1
      for _ in $(seq 1 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
      kill -KILL "$run_pid" 2>/dev/null
    fi
    wait "$run_pid" 2>/dev/null
    run_pid=
  fi
  [[ -n ${1:-} ]] || for d in "$t"/pg-*; do [[ -d $d ]] && scripts/pgtmp.sh destroy "$d" >/dev/null 2>&1; done
}
suite_on_exit stop_run

for tier in run idp test bench fuzz; do
  [[ -n "$(scripts/deps.sh --list "$tier")" ]] || nok "scripts/deps.sh --list $tier names packages"
done
run_tier=" $(scripts/deps.sh --list run | tr '\n' ' ') "
lab=""
for p in check valgrind chromium nodejs npm prometheus lintian docker-compose; do
  [[ $run_tier == *" $p "* ]] && lab="$lab $p"
done
if [[ -z $lab ]]; then ok "the run tier names none of the test lab (check, valgrind, chromium, nodejs...)"
else nok "the run tier names test-lab packages:$lab"; fi

# docs/contributing.md lists each tier with the packages deps.sh names (the sizes are counted).
for tier in run idp test bench fuzz; do
  names=$(scripts/deps.sh --list "$tier" | tr '\n' ' ' | sed 's/ $//')
  if grep -qF "| $tier | " docs/contributing.md && grep -F "| $tier | " docs/contributing.md | grep -qF "| $names |"; then
    ok "docs/contributing.md lists the $tier tier with the packages scripts/deps.sh names"
  else
    nok "docs/contributing.md's $tier row does not name what scripts/deps.sh --list $tier does ($names)"
  fi
done

# The sizes README.md and docs/contributing.md give: one place (the table, README.md its run row),
# and what Debian's archives count for each tier on
# a fresh Debian 12 (tiers.py docs), within 10 %.
python3 tests/tiers/tiers.py docs || failures=$((failures + 1))

if ! command -v strace >/dev/null || ! strace -f -o /dev/null true 2>/dev/null; then
  echo "skip - the tiers' traced runs: strace cannot trace here (not installed, or ptrace refused)"
  suite_exit
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# traced NAME [VAR=value...]: `make run` under strace (a fresh build directory, a cluster of its
# own), until the first get_bike_status answer (curl traced too, as the banner tells), then
# stopped. The trace is $t/NAME.trace; returns 1 when it did not serve.
traced() {
  local name=$1 port body
  shift
  setsid env -u DATABASE_URL -u BIKAROO_MIGRATE_URL -u BIKAROO_METRICS_LISTEN "$@" RUN_PG_DIR="$t/pg-$name" \
    BIKAROO_READY_FILE="$t/$name.port" BIKAROO_METRICS_LISTEN= \
    strace -f -qq -e trace=execve,openat,open -o "$t/$name.trace" \
    make --no-print-directory -j2 B="$t/build-$name" OPT=-O0 run >"$t/$name.log" 2>&1 &
  run_pid=$!
  for _ in $(seq 1 3000); do [[ -s $t/$name.port ]] && break; kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  if [[ ! -s $t/$name.port ]]; then
    tail -n 30 "$t/$name.log" | sed 's/^/# /'
    return 1
  fi
  port=$(cat "$t/$name.port")
  body=$(strace -f -qq -e trace=execve,openat,open -o "$t/$name.curl.trace" \
    curl -s "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
  stop_run "$name"
  cat "$t/$name.curl.trace" >>"$t/$name.trace" # once strace has closed it
  grep -q '"structuredContent":{"bikeId":"VL-2048"' <<<"$body" || {
    echo "# get_bike_status: ${body:0:300}"
    return 1
  }
}

if traced run; then
  ok "make run under strace, from a fresh build directory, serves get_bike_status"
  if out=$(python3 tests/tiers/tiers.py check "$t/run.trace" run); then
    ok "every file make run opened or executed belongs to the run tier or the base system ($(tail -n 1 <<<"$out" | sed 's/^# //'))"
  else
    echo "$out"
    nok "make run needs packages outside the run tier"
  fi
else
  nok "make run under strace serves get_bike_status"
fi

# BIKAROO_AUTH=jwt make run: the demo identity provider from tests/auth's own packages.
port=$(free_port)
if ! unshare -m true 2>/dev/null; then
  echo "skip - BIKAROO_AUTH=jwt make run without the test lab: no private mount namespace here (unshare -m)"
elif ! tests/auth/install.sh >"$t/idp-install.log" 2>&1; then
  cat "$t/idp-install.log"
  nok "tests/auth/install.sh installs the demo identity provider's packages"
else
  # Traced until a token minted by its provider (the demo's /mint) is answered, in a private
  # mount namespace where the test lab (tests/node_modules) is an empty folder: the demo must
  # start from its own packages alone, and must not install the lab.
  mkdir -p "$t/no-lab"
  hide=
  if [[ -d tests/node_modules ]]; then hide="mount --bind '$t/no-lab' tests/node_modules"; fi
  setsid unshare -m bash -c "mount --make-rprivate / && $hide${hide:+ && }exec env -u DATABASE_URL \
    -u BIKAROO_MIGRATE_URL RUN_PG_DIR='$t/pg-jwt' BIKAROO_AUTH=jwt BIKAROO_PORT='$port' \
    BIKAROO_READY_FILE='$t/jwt.port' BIKAROO_METRICS_LISTEN= \
    strace -f -qq -e trace=execve,openat,open -o '$t/jwt.trace' \
    make --no-print-directory B='$t/build-run' OPT=-O0 run" >"$t/jwt.log" 2>&1 &
  run_pid=$!
  for _ in $(seq 1 1200); do [[ -s $t/jwt.port ]] && break; kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  if [[ -s $t/jwt.port && -s $t/as.port ]]; then
    url="http://127.0.0.1:$port/mcp"
    TOKEN=$(curl -s "http://127.0.0.1:$(cat "$t/as.port")/mint?sub=marie&client=customer-care-assistant&scope=fleet:read&resource=$url" |
      python3 -c 'import json,sys; print(json.load(sys.stdin).get("access_token",""))')
    code=$(curl -s -o "$t/jwt.body" -w '%{http_code}' "$url" -H 'Content-Type: application/json' \
      -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
      -H 'Mcp-Method: tools/call' -H 'Mcp-Name: get_bike_status' -H "Authorization: Bearer $TOKEN" \
      -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_bike_status","arguments":{"bikeId":"VL-2048"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
    if [[ $code == 200 ]] && grep -q '"bikeId":"VL-2048"' "$t/jwt.body"; then
      ok "BIKAROO_AUTH=jwt make run serves get_bike_status to a token its demo identity provider minted"
    else
      nok "BIKAROO_AUTH=jwt make run answers a minted token: $code $(head -c 300 "$t/jwt.body")"
    fi
  else
    tail -n 30 "$t/jwt.log" | sed 's/^/# /'
    nok "BIKAROO_AUTH=jwt make run starts with its demo identity provider"
  fi
  stop_run jwt
  if [[ -s $t/jwt.trace ]]; then
    if out=$(python3 tests/tiers/tiers.py check "$t/jwt.trace" run idp); then
      ok "every file BIKAROO_AUTH=jwt make run opened or executed belongs to the run or idp tier or the base system ($(tail -n 1 <<<"$out" | sed 's/^# //'))"
    else
      echo "$out"
      nok "BIKAROO_AUTH=jwt make run needs packages outside the run and idp tiers"
    fi
    check_empty=$(find "$t/no-lab" -mindepth 1 | head -n 3)
    if [[ -z $check_empty ]]; then ok "BIKAROO_AUTH=jwt make run served with the test lab (tests/node_modules) hidden, and installed nothing there"
    else nok "BIKAROO_AUTH=jwt make run installed the test lab: $check_empty"; fi
  fi
fi
suite_exit
