#!/usr/bin/env bash
# tests/alerts/suite.sh: the Prometheus alerting rules and the dashboard shipped in
# packaging/monitoring (docs/fleet.md: Alerts and dashboard). promtool checks the rules and runs
# their unit tests (alerts.test.yml: each alert fired, and left silent); every series the rules
# and the dashboard name exists in common/metrics.c and in a running server's GET /metrics; every
# dashboard query parses as PromQL; the listen-slot threshold follows HTTP_MAX_STREAMS; make
# install ships both.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
# shellcheck source=tests/lib/harness.sh
source tests/lib/harness.sh
suite_init "$@"
rules=packaging/monitoring/bikaroo-mcp-alerts.yml
dash=packaging/monitoring/bikaroo-mcp-dashboard.json

if ! command -v promtool >/dev/null; then
  nok "promtool is not installed (scripts/deps.sh installs prometheus)"; exit 1
fi
out=$(promtool check rules "$rules" 2>&1) && ok "promtool check rules: $(grep -o '[0-9]* rules found' <<<"$out")" ||
  nok "promtool check rules: $out"
out=$(cd tests/alerts && promtool test rules alerts.test.yml 2>&1) && ok "promtool test rules: every alert's unit tests pass" ||
  nok "promtool test rules: $out"

# The series a live server exposes (its metrics before any request: every family is listed).
serve server || nok "the server starts for the alerts suite"
mport=$MPORT
curl -s "http://127.0.0.1:$mport/metrics" >"$t/metrics"
python3 - "$rules" "$dash" "$t/metrics" "$t/dash-rules.yml" <<'PY' || failures=$((failures + 1))
import json, re, sys, yaml
rules_path, dash_path, metrics_path, out = sys.argv[1:]
bad = 0
def check(cond, what):
    global bad
    print(f'{"ok" if cond else "not ok"} - {what}')
    bad += 0 if cond else 1
rules = yaml.safe_load(open(rules_path))
dash = json.load(open(dash_path))
exprs = [r['expr'] for g in rules['groups'] for r in g['rules']]
dexprs = [tg['expr'] for p in dash['panels'] for tg in p['targets']]
used = set(re.findall(r'\bbikaroo_[a-z_]+', ' '.join(exprs + dexprs)))
source = open('common/metrics.c').read()
families = set(re.findall(r'"(bikaroo_[a-z_]+)"', source))
live = set(re.findall(r'^# TYPE (bikaroo_[a-z_]+) ', open(metrics_path).read(), re.M))
base = lambda n: re.sub(r'_(bucket|sum|count)$', '', n) if re.sub(r'_(bucket|sum|count)$', '', n) in families else n
missing_src = sorted(n for n in used if base(n) not in families)
missing_live = sorted(n for n in used if base(n) not in live)
check(not missing_src, f'every series the rules and the dashboard use is a family of common/metrics.c ({len(used)} names)'
      + (f'; not: {missing_src}' if missing_src else ''))
check(live and not missing_live, f'and appears in a running server\'s GET /metrics ({len(live)} families there)'
      + (f'; not: {missing_live}' if missing_live else ''))
# Each dashboard query as a recording rule, for promtool to parse (Grafana's variables filled).
recs = [{'record': f'dashboard:q{i}', 'expr': e.replace('$__rate_interval', '5m').replace('$instance', '.*')}
        for i, e in enumerate(dexprs)]
yaml.safe_dump({'groups': [{'name': 'dashboard', 'rules': recs}]}, open(out, 'w'))
# Each alert has a unit test that fires it and one that does not.
tests = yaml.safe_load(open('tests/alerts/alerts.test.yml'))['tests']
cases = [c for t in tests for c in t.get('alert_rule_test', [])]
names = [r['alert'] for g in rules['groups'] for r in g['rules']]
lacking = [n for n in names if not any(c['alertname'] == n and c['exp_alerts'] for c in cases)
           or not any(c['alertname'] == n and not c['exp_alerts'] for c in cases)]
check(not lacking, f'each of the {len(names)} alerts has a test that fires it and one that does not'
      + (f'; not: {lacking}' if lacking else ''))
slots = re.search(r'#define HTTP_MAX_STREAMS (\d+)', open('server/transport/http_stream.h').read()).group(1)
listen = next(e for e in exprs if 'bikaroo_listen_streams_open' in e)
check(f'* {slots}' in listen, f'the listen-slot alert counts against HTTP_MAX_STREAMS ({slots})')
sys.exit(1 if bad else 0)
PY
out=$(promtool check rules "$t/dash-rules.yml" 2>&1) && ok "every dashboard query parses as PromQL ($(grep -o '[0-9]* rules found' <<<"$out"))" ||
  nok "dashboard queries: $out"
stop server

# make install ships them beside the migrations.
scripts/install.sh "$t/stage" /usr "$bin" 2>/dev/null
for f in bikaroo-mcp-alerts.yml bikaroo-mcp-dashboard.json; do
  # the same file, citing the installed documents (share/doc/bikaroo-mcp) instead of docs/
  sed 's|docs/\([a-z-]*\.md\)|/usr/share/doc/bikaroo-mcp/\1|g' "packaging/monitoring/$f" |
    cmp -s - "$t/stage/usr/share/bikaroo-mcp/monitoring/$f" ||
    { nok "make install ships $f in share/bikaroo-mcp/monitoring"; continue; }
done
[[ -f $t/stage/usr/share/bikaroo-mcp/monitoring/bikaroo-mcp-alerts.yml && -f $t/stage/usr/share/doc/bikaroo-mcp/fleet.md ]] &&
  ok "make install ships the rules and the dashboard in share/bikaroo-mcp/monitoring, and the document they cite"
suite_exit
