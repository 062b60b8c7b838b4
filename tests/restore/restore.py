"""Issue 20 item 4: the restore drill of docs/fleet.md ("Backup and restore").
1. A database in service: reports with idempotency keys and reads as marie (BIKAROO_AUTH=local),
   each call with a JSON-RPC id of its own (the audit row keeps it).
2. The backup as documented (pg_dump --format=custom --no-unlogged-table-data, as the superuser)
   while a load of reads and reports goes on; more calls once it is done.
3. A new cluster (scripts/pgtmp.sh: the roles, an empty database owned by fleet_owner), the
   restore as documented (pg_restore --exit-on-error), `bikaroo-mcp migrate` (nothing to apply),
   a server on it.
Then: the same answers for the bikes and the cases read before the backup; every call answered
before the backup began has its audit row, identical, and none answered after it ended has one;
every report restored has its audit row; a report whose idempotency key was used before the
backup replays (same reportId, nothing written); new reports get reportIds the source never
handed out, before or after the backup, above all of them.
    python3 restore.py TMPDIR"""
import json
import os
import re
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402

ok = C.Tap()
BIKES = [f'VL-{n}' for n in range(3500, 4000) if n % 3 == 2]  # marie's region (demo data)


class Client:
    """Calls on one server, each with its own JSON-RPC id; answered: id -> when its tools/call
    was answered."""

    def __init__(self, port, tag):
        self.url, self.tag, self.n = f'http://127.0.0.1:{port}/mcp', tag, 0
        self.answered = {}
        self.lock = threading.Lock()

    def call(self, method, params, name=None):
        with self.lock:
            self.n += 1
            rid = f'{self.tag}-{self.n}'
        st, body = C.call(self.url, None, method, params, name=name, rid=rid)
        res = (body or {}).get('result')
        if st != 200 or res is None or res.get('isError'):
            raise RuntimeError(f'{method} {json.dumps(params)[:120]}: {st} {json.dumps(body)[:300]}')
        if method == 'tools/call':  # every tools/call leaves an audit row (resources/read none)
            with self.lock:
                self.answered[rid] = time.monotonic()
        return res

    def bike(self, bike):
        return self.call('tools/call', {'name': 'get_bike_status', 'arguments': {'bikeId': bike}},
                         'get_bike_status')['structuredContent']

    def report(self, bike, key):
        args = {'bikeId': bike, 'issue': 'flat_tire', 'idempotencyKey': key}
        return self.call('tools/call', {'name': 'report_damaged_bike', 'arguments': args},
                         'report_damaged_bike')['structuredContent']

    def case(self, case_id):
        uri = f'bikaroo://cases/{case_id}'
        return self.call('resources/read', {'uri': uri}, uri)['contents'][0]['text']


def pg_env():
    """The environment of a PostgreSQL client: PG* variables cleared (the URLs pin everything)."""
    return {k: v for k, v in os.environ.items() if not k.startswith('PG') or k.startswith('PGTMP')}


def main(tmp):
    db = f'restore_it_{os.getpid()}'
    app_url, owner_url = C.fresh_database(db)
    super_url = re.sub(r'@/[^?]*\?', f'@/{db}?', os.environ['PGTMP_SUPER_URL'], count=1)
    cl = C.Cluster(tmp)
    env = dict(os.environ, DATABASE_URL=app_url, BIKAROO_AUTH='local', BIKAROO_LOCAL_SUBJECT='marie',
               BIKAROO_LOCAL_CLIENT='customer-care-assistant', BIKAROO_RATE_READS='0', BIKAROO_RATE_WRITES='0', BIKAROO_LOG_LEVEL='warn')
    env.pop('BIKAROO_MIGRATE_URL', None)
    try:
        a = Client(cl.instance('source', env), 'pre')
        # 1. in service: 20 reports with keys, reads of their bikes and cases.
        keys = {}
        for i, bike in enumerate(BIKES[:20]):
            keys[f'restore-{i}'] = (bike, a.report(bike, f'restore-{i}'))
        before = {b: a.bike(b) for b in BIKES[:20] + ['VL-2048']}
        cases = sorted({r['caseId'] for _, r in keys.values()})
        case_text = {c: a.case(c) for c in cases}

        # 2. the backup, under load.
        during = Client(a.url.split(':')[2].split('/')[0], 'during')
        stop = threading.Event()

        def load():
            i = 0
            while not stop.is_set():
                during.report(BIKES[20 + i % 10], f'during-{i}') if i % 4 == 0 else during.bike(BIKES[i % 30])
                i += 1

        th = threading.Thread(target=load)
        th.start()
        time.sleep(0.5)
        t_dump = time.monotonic()
        dump = os.path.join(tmp, 'bikaroo.dump')
        r = subprocess.run(['pg_dump', '--format=custom', '--no-unlogged-table-data', f'--file={dump}', super_url],
                           env=pg_env(), capture_output=True, text=True)
        t_dumped = time.monotonic()
        time.sleep(0.3)
        stop.set()
        th.join()
        ok(r.returncode == 0, f'pg_dump of the serving database as the superuser ({os.path.getsize(dump) if r.returncode == 0 else 0} '
           f'bytes, {t_dumped - t_dump:.2f} s, {len(during.answered)} calls answered meanwhile)' + (f': {r.stderr}' if r.returncode else ''))
        after = Client(a.url.split(':')[2].split('/')[0], 'post')
        for i in range(5):
            after.report(BIKES[40 + i], f'post-{i}')

        # 3. a new cluster: the roles and an empty database owned by fleet_owner, then the restore.
        out = subprocess.run(['scripts/pgtmp.sh', 'start', os.path.join(tmp, 'newpg')], env=dict(pg_env(), PGTMP_DB='restored'),
                             cwd=C.ROOT, capture_output=True, text=True, check=True).stdout
        new = dict(re.findall(r"^(\w+)='([^']*)'", out, re.M))
        new_super = re.sub(r'@/[^?]*\?', '@/restored?', new['PGTMP_SUPER_URL'], count=1)
        r = subprocess.run(['pg_restore', '--exit-on-error', f'--dbname={new_super}', dump], env=pg_env(),
                           capture_output=True, text=True)
        ok(r.returncode == 0, 'pg_restore --exit-on-error into an empty database of a new cluster (roles created as '
           'provisioning does)' + (f': {r.stderr[-500:]}' if r.returncode else ''))
        r = subprocess.run([os.environ['BIKAROO_BIN'], 'migrate'], env=dict(os.environ, BIKAROO_MIGRATE_URL=new['BIKAROO_MIGRATE_URL']),
                           capture_output=True, text=True)
        ok(r.returncode == 0 and '0 migration(s) applied' in r.stderr,
           f'bikaroo-mcp migrate on the restored database: nothing to apply ({r.stderr.strip().splitlines()[-1:]})')
        # The audit trail, as restored (before any call on it): complete up to the backup, nothing
        # from after it.
        cols = 'audit_id, at, subject, client_id, tool, target, args_digest, outcome, detail, request_id, trace_id, token_ref'
        # request_id is the JSON-RPC id as JSON ("pre-1", quotes included).
        src = {row[9].strip('"'): row for row in C.sql(owner_url, f'SELECT {cols} FROM fleet.audit_log')}
        dst = {row[9].strip('"'): row for row in C.sql(new['BIKAROO_MIGRATE_URL'], f'SELECT {cols} FROM fleet.audit_log')}
        must = [rid for c in (a, during) for rid, t in c.answered.items() if t < t_dump]
        never = list(after.answered)
        ok(all(rid in dst for rid in must), f'every call answered before the backup began has its audit row '
           f'({sum(rid in dst for rid in must)} of {len(must)})')
        ok(all(dst[k] == src.get(k) for k in dst), f'every restored audit row is the source\'s, unchanged ({len(dst)} rows)')
        ok(not any(rid in dst for rid in never) and all(rid in src for rid in never),
           f'none of the {len(never)} calls made after the backup is in it')
        renv = dict(env, DATABASE_URL=new['DATABASE_URL'])
        b = Client(cl.instance('restored', renv), 'restored')

        # The same answers for bikes and cases.
        diff = [x for x in before if b.bike(x) != before[x]]
        ok(not diff, f'get_bike_status answers as before the backup for {len(before)} bikes' + (f'; not: {diff[:3]}' if diff else ''))
        diff = [c for c in cases if b.case(c) != case_text[c]]
        ok(not diff, f'bikaroo://cases/{{caseId}} reads as before the backup for {len(cases)} cases' + (f'; not: {diff}' if diff else ''))

        orphans = C.sql(new['BIKAROO_MIGRATE_URL'], "SELECT count(*) FROM fleet.damage_reports d WHERE NOT EXISTS "
                        "(SELECT 1 FROM fleet.audit_log l WHERE l.report_id = d.report_id)")
        ok(orphans == [['0']], f'every restored report has its audit row (reports without one: {orphans[0][0]})')

        # Idempotency keys: a report filed before the backup replays.
        n0 = C.sql(new['BIKAROO_MIGRATE_URL'], 'SELECT count(*) FROM fleet.damage_reports')
        bike, first = keys['restore-3']
        again = b.report(bike, 'restore-3')
        n1 = C.sql(new['BIKAROO_MIGRATE_URL'], 'SELECT count(*) FROM fleet.damage_reports')
        ok(again['reportId'] == first['reportId'] and n0 == n1,
           f'a report whose key was used before the backup replays: {again["reportId"]} (was {first["reportId"]}), '
           f'{n0[0][0]} reports before and after')
        # New reports on the restored database: numbers the source never handed out, neither
        # before the backup nor after it (the five post- reports, the load's last ones), since a
        # customer may have been told any of them.
        fresh = [b.report(bike, f'restored-new-{i}')['reportId'] for i, bike in enumerate(BIKES[45:50])]
        issued = {x[0] for x in C.sql(owner_url, 'SELECT report_id FROM fleet.damage_reports')}
        num = lambda rid: int(rid[3:])  # noqa: E731 (DR-<number>)
        again = sorted(set(fresh) & issued, key=num)
        ok(not again and len(set(fresh)) == len(fresh),
           f'new reports on the restored database get reportIds the source never handed out, before or after the '
           f'backup ({", ".join(fresh)}; the source handed out {len(issued)}, up to {max(issued, key=num)})'
           + (f'; handed out again: {again}' if again else ''))
        ok(min(map(num, fresh)) > max(map(num, issued)),
           f'... and above every one of them ({min(fresh, key=num)} > {max(issued, key=num)})')
    except Exception as e:
        ok(False, f'restore harness: {e!r}')
        cl.print_tails()
    finally:
        cl.close()
        C.drop_database(db)
    return 1 if ok.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
