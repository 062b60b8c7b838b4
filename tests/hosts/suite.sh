#!/usr/bin/env bash
# tests/hosts/suite.sh: every host configuration of hosts/ works as written (hosts.mjs). The
# stdio entries name the installed binary (/usr/bin/bikaroo-mcp, as the Debian package puts it):
# `make install DESTDIR=... PREFIX=/usr` stages it, and a private mount namespace (unshare -m)
# lays the staged /usr over the machine's for the client and the server it launches, so each
# entry runs with exactly its command, args and env. The http entries are called against the
# same installed binary serving like `make run` (local mode, loopback), on a free port.
# The files are what the packaged binary's `host-config HOST` prints (scripts/host-files.sh
# --check). Then what a user gets, each launched exactly as written: the installed binary's
# `host-config HOST` for the test database, and the files `make run` writes for the local build
# and its own database (with its install links, which must carry the same entries); then the
# same in BIKAROO_AUTH=jwt (each file with a token minted by scripts/dev-token.sh pasted in).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
B=${1:-build}
t=$(mktemp -d)
chmod 755 "$t"
run_pid=
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
  if [[ -n $run_pid ]]; then
    kill -TERM -- "-$run_pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  for d in "$t/run/pg" "$t/jwt/pg"; do scripts/pgtmp.sh destroy "$d" >/dev/null 2>&1; done
  rm -rf "$t"
}
trap cleanup EXIT
if out=$(scripts/host-files.sh --check 2>&1); then
  echo "ok - hosts/*.json are what the packaged binary's host-config prints (scripts/host-files.sh --check)"
else
  printf '# %s\n' "${out//$'\n'/$'\n'# }"
  echo "not ok - hosts/*.json differ from the packaged binary's host-config"
fi
if ! make -s --no-print-directory install DESTDIR="$t/stage" PREFIX=/usr UNITDIR=/lib/systemd/system \
  >"$t/install.log" 2>&1; then
  cat "$t/install.log"; echo "not ok - make install DESTDIR PREFIX=/usr for the host configurations"; exit 1
fi
if ! unshare -m true 2>/dev/null; then
  echo "skip - hosts/*.json: no private mount namespace here (unshare -m) to put /usr/bin/bikaroo-mcp in place"
  exit 0
fi
tests/e2e/install.sh || { echo "not ok - the pinned client (tests/package.json) installs"; exit 1; }
cat >"$t/run.sh" <<RUN
set -u
mount --make-rprivate /
mount -t overlay overlay -o lowerdir=$t/stage/usr:/usr /usr
cd /
env -u BIKAROO_RESOURCES_DIR -u BIKAROO_PROMPTS_DIR -u BIKAROO_MIGRATIONS_DIR -u BIKAROO_MIGRATE_URL \
  BIKAROO_AUTH=local BIKAROO_PORT=0 BIKAROO_READY_FILE=$t/port /usr/bin/bikaroo-mcp serve 2>$t/serve.log &
pid=\$!
for _ in \$(seq 1 100); do [ -s $t/port ] && break; sleep 0.1; done
[ -s $t/port ] || { cat $t/serve.log; echo "not ok - the installed binary serves for the http entries"; kill \$pid; exit 1; }
HOSTS_DATABASE_URL='$DATABASE_URL' HOSTS_HTTP_PORT=\$(cat $t/port) node $PWD/tests/hosts/hosts.mjs $PWD/hosts
rc=\$?
# What the installed binary writes for the test database, launched as written.
mkdir -p $t/installed
for h in vscode vscode-http cursor cursor-http claude-desktop; do
  env -u BIKAROO_RESOURCES_DIR -u BIKAROO_PROMPTS_DIR DATABASE_URL='$DATABASE_URL' BIKAROO_AUTH=local \
    BIKAROO_PORT=\$(cat $t/port) /usr/bin/bikaroo-mcp host-config \$h >$t/installed/\$h.json || rc=1
done
HOSTS_HTTP_PORT=\$(cat $t/port) node $PWD/tests/hosts/hosts.mjs $t/installed --generated | sed 's/^\(not \)\{0,1\}ok - /&installed host-config: /' || rc=1
kill -TERM \$pid; wait \$pid || { tail -n 20 $t/serve.log; echo "not ok - the installed binary stops with 0"; rc=1; }
exit \$rc
RUN
unshare -m bash "$t/run.sh"
rc=$?

# make run (scripts/run.sh after the build): the files it writes for the local build and its own
# database, each launched exactly as written, and its install links.
mkdir -p "$t/run"
setsid env -u DATABASE_URL -u BIKAROO_MIGRATE_URL -u BIKAROO_METRICS_LISTEN RUN_PG_DIR="$t/run/pg" BIKAROO_PORT=0 \
  BIKAROO_READY_FILE="$t/run.port" scripts/run.sh "$B/bikaroo-mcp" >"$t/run.log" 2>&1 &
run_pid=$!
for _ in $(seq 1 600); do grep -q 'Ctrl-C stops' "$t/run.log" 2>/dev/null && break; kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
if [[ -s $t/run/hosts/links.txt ]] && grep -q "$t/run/hosts/vscode.json" "$t/run.log"; then
  echo "ok - make run's banner names the host files it wrote ($t/run/hosts)"
  HOSTS_HTTP_PORT=$(cat "$t/run.port") node tests/hosts/hosts.mjs "$t/run/hosts" --generated |
    sed 's/^\(not \)\{0,1\}ok - /&make run: /'
  [[ ${PIPESTATUS[0]} == 0 ]] || rc=1
else
  sed 's/^/# /' "$t/run.log"
  echo "not ok - make run writes its host files"
  rc=1
fi
kill -TERM -- "-$run_pid" 2>/dev/null
for _ in $(seq 1 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done

# BIKAROO_AUTH=jwt make run (its own demo identity provider): every host file is written, the
# stdio ones too, and each works as written once a token from scripts/dev-token.sh is pasted in
# (the http ones with that token as their host's OAuth flow would bring it); dev-token.sh mints
# for a client id the provider did not know, and says why in words when it cannot.
mkdir -p "$t/jwt"
jport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
setsid env -u DATABASE_URL -u BIKAROO_MIGRATE_URL -u BIKAROO_METRICS_LISTEN -u BIKAROO_AUTH_ISSUER RUN_PG_DIR="$t/jwt/pg" \
  BIKAROO_AUTH=jwt BIKAROO_PORT="$jport" scripts/run.sh "$B/bikaroo-mcp" >"$t/jwt.log" 2>&1 &
run_pid=$!
for _ in $(seq 1 1200); do grep -q 'Ctrl-C stops' "$t/jwt.log" 2>/dev/null && break; kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
jhosts=$t/jwt/hosts
if grep -q 'Ctrl-C stops' "$t/jwt.log"; then
  missing=$(for h in vscode cursor claude-desktop vscode-http cursor-http; do [[ -s $jhosts/$h.json ]] || echo "$h"; done)
  if [[ -z $missing ]]; then echo "ok - BIKAROO_AUTH=jwt make run writes every host file, the stdio ones too"
  else echo "not ok - BIKAROO_AUTH=jwt make run writes every host file: missing $missing"; rc=1; fi
  if grep -q '"BIKAROO_AUTH_INSECURE_LOOPBACK": "1"' "$jhosts/vscode.json" 2>/dev/null; then
    echo "ok - its stdio files reach the development issuer over loopback http (BIKAROO_AUTH_INSECURE_LOOPBACK=1)"
  else echo "not ok - its stdio files set BIKAROO_AUTH_INSECURE_LOOPBACK=1 for the loopback issuer"; rc=1; fi
  token=$(RUN_PG_DIR="$t/jwt/pg" scripts/dev-token.sh marie customer-care-assistant 'fleet:read fleet:report' 2>"$t/token.err")
  if [[ -n $token ]]; then
    HOSTS_TOKEN=$token HOSTS_HTTP_PORT=$jport node tests/hosts/hosts.mjs "$jhosts" --generated |
      sed 's/^\(not \)\{0,1\}ok - /&BIKAROO_AUTH=jwt make run, a minted token pasted in: /'
    [[ ${PIPESTATUS[0]} == 0 ]] || rc=1
  else
    echo "not ok - scripts/dev-token.sh mints a token for marie: $(cat "$t/token.err")"; rc=1
  fi
  other=$(RUN_PG_DIR="$t/jwt/pg" scripts/dev-token.sh marie ide-beta fleet:read 2>&1)
  claims=$(cut -d. -f2 <<<"$other" | tr '_-' '/+' | base64 -d 2>/dev/null)
  if grep -q '"client_id":"ide-beta"' <<<"$claims"; then echo "ok - dev-token.sh mints for a client id the provider did not know (ide-beta)"
  else echo "not ok - dev-token.sh mints for a client id the provider did not know: ${other:0:300}"; rc=1; fi
  out=$(RUN_PG_DIR="$t/jwt/pg" scripts/dev-token.sh robot robot fleet:read 2>&1)
  if ! grep -q '<' <<<"$out" && grep -q 'dev-token.sh: .*no machine client robot' <<<"$out"; then
    echo "ok - when it cannot mint, dev-token.sh says why in words, not an HTML page ($out)"
  else echo "not ok - dev-token.sh says why in words when it cannot mint: ${out:0:300}"; rc=1; fi
else
  sed 's/^/# /' "$t/jwt.log"
  echo "not ok - BIKAROO_AUTH=jwt make run serves"
  rc=1
fi
exit $rc
