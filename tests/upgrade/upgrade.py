"""Issue 20 item 3: a rolling upgrade from the previous release (tests/upgrade/PREVIOUS, built
from git by previous.sh) to this one, behind nginx (docker/nginx.conf), on one database.

The database is migrated by the previous release and served by two of its instances (old1,
old2); under a load of reads, reports with idempotency keys and reports that need a confirmation
(careful-assistant: input_required, then the accepted retry), this release migrates it (expand:
the previous release keeps serving on the new schema), then old1 is stopped (SIGTERM, drained) and
replaced by new1 on its port, the two releases serve side by side, and old2 is replaced by new2.
Confirmations are begun on one release and completed on the other, both ways, directly on each
instance. Then: nothing lost (every report and every confirmation the clients saw succeed is
stored, with the reportId answered), nothing doubled (one row per key, one per confirmation),
every confirmation completed, whichever instance it reached. Side by side, the official client
lists the tools on one release and calls them on the other, both ways (mixed-client.mjs): every
answer passes the output schema it listed.
    python3 upgrade.py TMPDIR PREVIOUS_SOURCE_DIR"""
import http.client
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402

ok = C.Tap()
FR_PAR = [f'VL-{n}' for n in range(3000, 4000) if n % 3 == 2]  # marie's region (demo data)
CAPS = {'elicitation': {'form': {}}}
ACCEPT = {'confirm': {'action': 'accept', 'content': {'confirm': True}}}


class Load:
    """Workers through url until stopped: reports with keys (token), reads, and confirmations
    (careful: begin, then the accepted retry), each retried on 5xx, 429 and connection errors
    until it succeeds. reports: key -> reportId seen; confirmed: bike -> reportId seen."""

    def __init__(self, url, token, careful):
        self.url, self.token, self.careful = url, token, careful
        self.lock = threading.Lock()
        self.reports, self.confirmed, self.reads = {}, {}, 0
        self.retries, self.other = 0, []
        self.stop = threading.Event()
        self.n = 0

    def call(self, token, params, name, caps=None):
        """(status, body) of the first answer that is not a 5xx, 429 or connection error."""
        while True:
            try:
                st, body = C.call(self.url, token, 'tools/call', params, name=name, timeout=10, caps=caps)
                if st < 500 and st != 429 and body is not None:
                    return st, body
            except (OSError, http.client.HTTPException):
                pass
            with self.lock:
                self.retries += 1
            time.sleep(0.05)

    def next(self):
        with self.lock:
            self.n += 1
            return self.n

    def one(self):
        i = self.next()
        kind = i % 4
        if kind in (0, 1):  # a report with its own key
            key = f'up-{i}-{secrets.token_hex(3)}'
            args = {'bikeId': FR_PAR[i % 150], 'issue': 'flat_tire', 'description': key, 'idempotencyKey': key}
            st, body = self.call(self.token, {'name': 'report_damaged_bike', 'arguments': args}, 'report_damaged_bike')
            rid = ((body.get('result') or {}).get('structuredContent') or {}).get('reportId')
            with self.lock:
                if rid:
                    self.reports[key] = rid
                else:
                    self.other.append(('report', st, json.dumps(body)[:200]))
        elif kind == 2:  # a read
            st, body = self.call(self.token, {'name': 'get_bike_status', 'arguments': {'bikeId': FR_PAR[i % 150]}},
                                 'get_bike_status')
            with self.lock:
                if st == 200 and not (body.get('result') or {}).get('isError'):
                    self.reads += 1
                else:
                    self.other.append(('read', st, json.dumps(body)[:200]))
        else:  # a confirmation: begun on whichever instance, completed on whichever instance
            bike = FR_PAR[150 + i // 4 % 160]
            args = {'name': 'report_damaged_bike', 'arguments': {'bikeId': bike, 'issue': 'brake_failure',
                                                                 'description': f'confirm-{i}'}}
            st, body = self.call(self.careful, args, 'report_damaged_bike', CAPS)
            state = (body.get('result') or {}).get('requestState')
            if not state:
                with self.lock:
                    self.other.append(('begin', st, json.dumps(body)[:200]))
                return
            st, body = self.call(self.careful, dict(args, inputResponses=ACCEPT, requestState=state),
                                 'report_damaged_bike', CAPS)
            rid = ((body.get('result') or {}).get('structuredContent') or {}).get('reportId')
            with self.lock:
                if rid:
                    self.confirmed[f'confirm-{i}'] = rid
                else:
                    self.other.append(('confirm', st, json.dumps(body)[:200]))

    def run(self, workers=6):
        ts = [threading.Thread(target=lambda: [self.one() for _ in iter(self.stop.is_set, True)]) for _ in range(workers)]
        for t in ts:
            t.start()
        return ts


def directed(careful, begin_port, end_port, bike, tag):
    """A confirmation begun on one instance and completed on another; its reportId or the error."""
    args = {'name': 'report_damaged_bike', 'arguments': {'bikeId': bike, 'issue': 'brake_failure', 'description': tag}}
    st, first = C.call(f'http://127.0.0.1:{begin_port}/mcp', careful, 'tools/call', args, name='report_damaged_bike', caps=CAPS)
    state = ((first or {}).get('result') or {}).get('requestState')
    if not state:
        return None, f'begin: {st} {json.dumps(first)[:200]}'
    st, second = C.call(f'http://127.0.0.1:{end_port}/mcp', careful, 'tools/call',
                        dict(args, inputResponses=ACCEPT, requestState=state), name='report_damaged_bike', caps=CAPS)
    rid = (((second or {}).get('result') or {}).get('structuredContent') or {}).get('reportId')
    return rid, '' if rid else f'complete: {st} {json.dumps(second)[:300]}'


def mixed(list_port, call_port, token, bike, tag):
    """mixed-client.mjs: the official client lists on one instance and calls on another; the
    calls that failed (with why) and the answers' undeclared properties, or the run's error."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        r = subprocess.run([os.environ.get('E2E_NODE', 'node'), os.path.join(here, 'mixed-client.mjs'),
                            f'http://127.0.0.1:{list_port}/mcp', f'http://127.0.0.1:{call_port}/mcp', token, bike, tag],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return ['mixed-client.mjs did not end within 120 s'], [], 0
    calls = [json.loads(line) for line in r.stdout.splitlines() if line.startswith('{')]
    failed = [f'{c["era"]} {c["tool"]}: {c["error"][:300]}' for c in calls if not c['ok']]
    if r.returncode != 0 or not calls:
        failed.append(f'mixed-client.mjs exited {r.returncode}: {r.stderr[-300:]}')
    extra = [f'{c["era"]} {c["tool"]}: {c["undeclared"]}' for c in calls if c['undeclared']]
    return failed, extra, len(calls)


def main(tmp, prev):
    old_bin = os.path.join(prev, 'build/bikaroo-mcp')
    new_bin = os.environ['BIKAROO_BIN']
    db = f'upgrade_it_{os.getpid()}'
    C.drop_database(db)
    subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', os.environ['PGTMP_SUPER_URL'], '-c',
                    f'CREATE DATABASE {db} OWNER fleet_owner'], check=True, stdout=subprocess.DEVNULL)
    swap = lambda u: u.replace('@/bikaroo?', f'@/{db}?')
    owner_url, app_url = swap(os.environ['BIKAROO_MIGRATE_URL']), swap(os.environ['DATABASE_URL'])
    old_dirs = {f'BIKAROO_{d.upper()}_DIR': os.path.join(prev, d) for d in ('migrations', 'resources', 'prompts')}
    cl = C.Cluster(tmp)
    try:
        # The previous release's database: its migrations, its demo data.
        subprocess.run([old_bin, 'migrate'], env=dict(os.environ, BIKAROO_MIGRATE_URL=owner_url, **old_dirs),
                       check=True, capture_output=True)
        subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', owner_url, '-f',
                        os.path.join(prev, 'migrations/demo/demo-data.sql')], check=True, stdout=subprocess.DEVNULL)
        proxy = C.free_port()
        resource = f'http://127.0.0.1:{proxy}/mcp'
        issuer = cl.idp(resource)
        env = dict(os.environ, DATABASE_URL=app_url, BIKAROO_AUTH='jwt', BIKAROO_AUTH_ISSUER=issuer,
                   BIKAROO_AUTH_INSECURE_LOOPBACK='1', BIKAROO_RESOURCE_URI=resource,
                   BIKAROO_STATE_SECRET=secrets.token_hex(24), BIKAROO_LOG_LEVEL='warn',
                   BIKAROO_RATE_WRITES='0', BIKAROO_RATE_READS='0')
        env.pop('BIKAROO_MIGRATE_URL', None)
        old_env = dict(env, **old_dirs)
        p1, p2 = C.free_port(), C.free_port()
        cl.instance('old1', old_env, binary=old_bin, port=p1)
        cl.instance('old2', old_env, binary=old_bin, port=p2)
        cl.nginx(cl.nginx_conf(f'127.0.0.1:{proxy}', [f'127.0.0.1:{p1}', f'127.0.0.1:{p2}']), '127.0.0.1', proxy)
        token = C.mint(issuer, 'marie', 'customer-care-assistant', 'fleet:read fleet:report', resource)
        careful = C.mint(issuer, 'marie', 'careful-assistant', 'fleet:read fleet:report', resource)
        old_version = subprocess.run([old_bin, '--version'], capture_output=True, text=True).stdout.strip()

        load = Load(resource, token, careful)
        threads = load.run()
        time.sleep(2)
        # Expand: this release's migrations while the previous release serves.
        r = subprocess.run([new_bin, 'migrate'], env=dict(os.environ, BIKAROO_MIGRATE_URL=owner_url), capture_output=True,
                           text=True)
        ok(r.returncode == 0, f'this release migrates the database while {old_version} serves it'
           + ('' if r.returncode == 0 else f': {r.stderr[-400:]}'))
        time.sleep(1)
        st = subprocess.run(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', f'http://127.0.0.1:{p2}/readyz'],
                            capture_output=True, text=True).stdout
        ok(st == '200', f'the previous release is ready on the new schema (/readyz {st})')
        # Roll: old1 -> new1 on its port; both releases side by side; old2 -> new2.
        rc1 = cl.stop('old1', signal.SIGTERM)
        cl.instance('new1', env, port=p1)
        side = []
        for k in range(3):
            side.append(('old -> new',) + directed(careful, p2, p1, FR_PAR[320 + k], f'directed-on-{k}'))
            side.append(('new -> old',) + directed(careful, p1, p2, FR_PAR[330 + k], f'directed-no-{k}'))
        # A host behind a round-robin proxy lists on one instance and calls another: each
        # answer must pass the output schema it listed, whichever release listed or answered.
        for k, (what, lp, cp) in enumerate((('lists on the previous release, calls this one', p2, p1),
                                            ('lists on this release, calls the previous one', p1, p2))):
            failed, _, n = mixed(lp, cp, token, FR_PAR[310 + k], f'mixed-{k}')
            ok(n == 4 and not failed, f'the official client {what}: {n - len(failed)} of 4 answers (get_bike_status, '
               f'report_damaged_bike; 2026-07-28 and 2025-11-25) pass the output schema it listed'
               + (f'; not: {failed}' if failed else ''))
        failed, extra, n = mixed(p1, p1, token, FR_PAR[312], 'mixed-2')
        ok(n == 4 and not failed and not extra, 'this release answers only what its output schemas declare '
           '(what lets a later release add a property to them)' + (f'; not: {failed + extra}' if failed or extra else ''))
        # Side by side long enough for nginx to send to both again (a replica that refused a
        # connection is left out for fail_timeout, 5 s): the load's confirmations cross too.
        time.sleep(7)
        rc2 = cl.stop('old2', signal.SIGTERM)
        cl.instance('new2', env, port=p2)
        time.sleep(2)
        load.stop.set()
        for t in threads:
            t.join()
        ok(rc1 == 0 and rc2 == 0 and not load.other,
           f'the load went through the roll: {len(load.reports)} reports, {len(load.confirmed)} confirmations, '
           f'{load.reads} reads answered; {load.retries} retries (5xx, 429, connection); the previous release\'s '
           f'instances drained and exited {rc1}, {rc2}' + (f'; other answers: {load.other[:3]}' if load.other else ''))
        bad = [s for s in side if not s[1]]
        ok(not bad, f'confirmations begun on one release complete on the other, both ways, side by side: '
           f'{", ".join(f"{d} {rid}" for d, rid, _ in side)}' + (f'; failed: {bad}' if bad else ''))
        n1 = len(load.confirmed)

        # Nothing lost, nothing doubled.
        rows = C.sql(owner_url, "SELECT description, report_id, reported_via FROM fleet.damage_reports")
        by = {}
        for desc, rid, via in rows:
            by.setdefault(desc, []).append((rid, via))
        lost = [k for k, rid in load.reports.items() if by.get(k) != [(rid, 'customer-care-assistant')]]
        ok(load.reports and not lost, f'every report a client saw succeed is stored once, with the reportId it was answered '
           f'({len(load.reports) - len(lost)} of {len(load.reports)})' + (f'; not: {lost[:3]}' if lost else ''))
        lost = [k for k, rid in load.confirmed.items() if by.get(k) != [(rid, 'careful-assistant')]]
        ok(n1 and not lost, f'every confirmation completed is stored once, with its reportId ({n1 - len(lost)} of {n1}), '
           f'on whichever instance each half reached' + (f'; not: {lost[:3]}' if lost else ''))
        doubled = {k: v for k, v in by.items() if len(v) > 1}
        # A key lives in fleet.idempotent_calls, or in fleet.idempotency_keys when the previous
        # release's text recorded it while this release migrated (fleet.write_begin reads both).
        keys = C.sql(owner_url, "SELECT count(*) FROM (SELECT idem_key FROM fleet.idempotent_calls WHERE subject = 'marie' AND idem_key LIKE 'up-%' "
                     "UNION SELECT idem_key FROM fleet.idempotency_keys WHERE subject = 'marie' AND idem_key LIKE 'up-%') k")
        ok(not doubled and int(keys[0][0]) == len([k for k in by if k.startswith('up-')]),
           f'nothing doubled: {len(rows)} reports for {len(by)} keys and confirmations'
           + (f'; doubled: {list(doubled.items())[:3]}' if doubled else ''))
    except Exception as e:
        ok(False, f'upgrade harness: {e!r}')
        cl.print_tails()
    finally:
        cl.close()
        C.drop_database(db)
    return 1 if ok.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], sys.argv[2]))
