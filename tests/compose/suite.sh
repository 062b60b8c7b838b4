#!/usr/bin/env bash
# tests/compose/suite.sh: docker-compose.yml. `docker-compose config -q` with the secrets of
# docker/make-secrets.sh (and without them: the `:?` refusal), the image's and the compose file's
# shape (numeric USER, HEALTHCHECK, OCI labels, secrets through *_FILE, no password in an
# environment, replicas without host ports), the server's *_FILE reading, then the whole
# topology run natively from `docker-compose config` output (native.py, in a private mount
# namespace). What only a container engine can show: docs/operating.md, Compose.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
chmod 755 "$t"
: >"$t/none.env" # a developer's .env beside the compose file must not count

# --- the server reads a secret from NAME_FILE (Docker secrets), refuses both, names a bad file.
printf '%s\n' "$DATABASE_URL" >"$t/dburl"
printf 'a-state-secret-of-at-least-32-characters\n' >"$t/state"
out=$(env -u DATABASE_URL DATABASE_URL_FILE="$t/dburl" BIKAROO_STATE_SECRET_FILE="$t/state" BIKAROO_AUTH=local \
  BIKAROO_LOG_LEVEL=debug BIKAROO_PORT=0 BIKAROO_READY_FILE="$t/port" timeout 20 "$bin" serve 2>&1 &
  pid=$!; for _ in $(seq 1 100); do [[ -s $t/port ]] && break; sleep 0.1; done; kill -TERM $pid; wait $pid)
if [[ -s $t/port ]] && grep -q 'BIKAROO_STATE_SECRET=(set, hidden)' <<<"$out" && ! grep -q 'a-state-secret' <<<"$out"; then
  ok "the server reads DATABASE_URL_FILE and BIKAROO_STATE_SECRET_FILE (trailing newline dropped, value never logged)"
else
  nok "the server reads DATABASE_URL_FILE and BIKAROO_STATE_SECRET_FILE: $out"
fi
out=$(DATABASE_URL_FILE="$t/dburl" "$bin" serve 2>&1); rc=$?
if [[ $rc == 2 ]] && grep -q 'set DATABASE_URL or DATABASE_URL_FILE, not both' <<<"$out"; then
  ok "DATABASE_URL and DATABASE_URL_FILE together are refused (exit 2)"
else nok "DATABASE_URL and DATABASE_URL_FILE together are refused: $rc $out"; fi
out=$(env -u DATABASE_URL DATABASE_URL_FILE="$t/none" "$bin" serve 2>&1); rc=$?
if [[ $rc == 2 ]] && grep -q "DATABASE_URL_FILE: cannot read $t/none: No such file" <<<"$out"; then
  ok "an unreadable DATABASE_URL_FILE is refused naming the variable, the file and the reason"
else nok "an unreadable DATABASE_URL_FILE is refused: $rc $out"; fi
: >"$t/empty"
out=$(env -u BIKAROO_STATE_SECRET BIKAROO_STATE_SECRET_FILE="$t/empty" "$bin" serve 2>&1); rc=$?
if [[ $rc == 2 ]] && grep -q 'is empty' <<<"$out"; then ok "an empty secret file is refused"
else nok "an empty secret file is refused: $rc $out"; fi

# --- docker-compose config
if ! command -v docker-compose >/dev/null; then
  echo "skip - docker-compose.yml: docker-compose is not installed"; suite_exit
fi
out=$(env -u BIKAROO_SECRETS docker-compose --project-directory "$PWD" -f docker-compose.yml --env-file "$t/none.env" config -q 2>&1)
if [[ $? != 0 ]] && grep -q 'run docker/make-secrets.sh first' <<<"$out"; then
  ok "docker-compose config refuses to go on without the secrets, naming docker/make-secrets.sh (:?)"
else nok "docker-compose config without secrets: $out"; fi
docker/make-secrets.sh "$t/secrets" 2>/dev/null
rm -f .env.test-$$
public=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
idp_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
export BIKAROO_SECRETS=$t/secrets BIKAROO_PUBLIC_PORT=$public BIKAROO_DEMO_IDP_PORT=$idp_port
if docker-compose --env-file "$t/none.env" config -q; then ok "docker-compose config -q accepts docker-compose.yml"
else nok "docker-compose config -q"; fi
docker-compose --env-file "$t/none.env" config >"$t/config.yml" 2>"$t/config.err" || cat "$t/config.err"
[[ -s $t/secrets/state_secret && $(stat -c %a "$t/secrets") == 700 ]] &&
  ok "docker/make-secrets.sh writes random secrets in a 0700 folder" || nok "docker/make-secrets.sh"
python3 - "$t/config.yml" <<'PY' || failures=$((failures + 1))
import re, sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
s = c['services']
bad = 0
def check(cond, what):
    global bad
    print(f'{"ok" if cond else "not ok"} - {what}')
    bad += 0 if cond else 1
envs = {n: v.get('environment') or {} for n, v in s.items()}
check(not [f'{n}.{k}' for n, e in envs.items() for k, v in e.items()
           if re.search(r'PASSWORD$|SECRET$|_URL$', k) or re.search(r'://[^/@]*:[^/@]*@', str(v))],
      'compose: no password, secret or database URL in any environment (all through *_FILE and /run/secrets)')
check(int(s['server'].get('deploy', {}).get('replicas', 1)) == 2 and 'ports' not in s['server'],
      'compose: two server replicas, no host port on them')
check(envs['server'].get('BIKAROO_STATE_SECRET_FILE') == '/run/secrets/state_secret',
      'compose: every replica gets the one shared BIKAROO_STATE_SECRET (a Docker secret)')
check(all('healthcheck' in s[n] for n in ('db', 'server', 'proxy', 'idp'))
      and '/readyz' in ' '.join(s['server']['healthcheck']['test']),
      'compose: healthchecks on db, idp, proxy and the replicas (/readyz)')
check(s['proxy']['depends_on']['server']['condition'] == 'service_healthy'
      and s['server']['depends_on']['migrate']['condition'] == 'service_completed_successfully'
      and s['migrate']['depends_on']['db']['condition'] == 'service_healthy',
      'compose: start order db healthy -> migrate completed -> replicas healthy -> proxy')
ports = [p if isinstance(p, dict) else {'host_ip': p.split(':')[0]} for n in s for p in s[n].get('ports', [])]
check(ports and all(p.get('host_ip') == '127.0.0.1' for p in ports),
      'compose: published ports on 127.0.0.1 only')
sys.exit(1 if bad else 0)
PY
d=$(cat Dockerfile)
grep -qE '^USER [0-9]+:[0-9]+$' <<<"$d" && ! grep -qE '^USER [a-z]' <<<"$d" &&
  ok "Dockerfile: every USER is numeric (runAsNonRoot can verify it)" || nok "Dockerfile: numeric USER"
grep -A1 '^HEALTHCHECK ' <<<"$d" | grep -q '/readyz' && ok "Dockerfile: the runtime image has a HEALTHCHECK on /readyz" || nok "Dockerfile: HEALTHCHECK"
for l in title description version vendor licenses; do
  grep -q "org.opencontainers.image.$l=" <<<"$d" || nok "Dockerfile: OCI label $l"
done
ok "Dockerfile: OCI labels (title, description, version, vendor, licenses)"
[[ $(grep -E '^FROM ' Dockerfile | tail -n 1) == *' AS runtime' ]] &&
  ok "Dockerfile: the server is the last stage, what a plain docker build makes (hosts/docker-stdio.json)" ||
  nok "Dockerfile: the last stage is not runtime"
grep -qx 'tests/node_modules/' .dockerignore && grep -qx 'docker/secrets/' .dockerignore &&
  ok ".dockerignore keeps node_modules and the secrets out of the build context" || nok ".dockerignore"

# --- the topology, natively: the image's installed tree (the build stage's command), then native.py.
if ! make -s --no-print-directory install PREFIX=/usr UNITDIR=/lib/systemd/system DESTDIR="$t/stage" >"$t/install.log" 2>&1; then
  cat "$t/install.log"; nok "the image's make install"; exit 1
fi
for tool in nginx socat; do
  command -v $tool >/dev/null || { nok "the native compose topology needs $tool (scripts/deps.sh)"; exit 1; }
done
if ! unshare -m true 2>/dev/null; then
  echo "skip - the compose topology natively: no private mount namespace here (unshare -m)"; suite_exit
fi
tests/e2e/install.sh || { nok "the pinned client installs"; exit 1; }
unshare -m python3 tests/compose/native.py "$t" "$t/stage" "$t/config.yml" "$public" || failures=$((failures + 1))
suite_exit
