"""Issue 20 item 1: budgets across instances. Three instances behind nginx (docker/nginx.conf),
one database, BIKAROO_RATE_STORE=database, each acting as marie (BIKAROO_AUTH=local: one subject
through one client application). Budget: BIKAROO_RATE_READS=600 a minute, bursts of 50.

0. A caller within its budget (8 calls a second for 5 s, one connection): every call admitted,
   with a store call per lease of several calls (the figure printed is the cost per call).
1. BUDGET_SECONDS of get_bike_status as fast as WORKERS connections go, through nginx: the
   calls admitted stay within the deployment's budget (50 + 10 a second) and get most of it;
   every refusal is a 429 with Retry-After and -32029; each admitted call has its audit row,
   a refused one none. Store calls are counted from the instances' metrics.
2. The budget store made unreachable (fleet.budgets locked, as VACUUM FULL or an administrator
   would), FALLBACK_SECONDS of the same load: no call fails, each instance enforces a budget of
   its own (more than the shared budget gets through, at most three), and says so in /metrics
   (bikaroo_rate_limit_local_fallback 1).
3. The lock released: the instances return to the shared budget (the gauge back to 0).
Prints ok / not ok lines and the figures.   python3 budgets.py TMPDIR"""
import http.client
import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402

SECONDS = float(os.environ.get('BUDGET_SECONDS', '20'))
FALLBACK_SECONDS = 8
WORKERS = 8
PER_MINUTE, BURST, INSTANCES = 600, 50, 3
ok = C.Tap()


class Load:
    """get_bike_status through the proxy from WORKERS kept-alive connections until stop."""

    def __init__(self, port):
        self.port = port
        self.lock = threading.Lock()
        self.admitted = self.refused = 0
        self.bad = []  # (status, what) of anything else, or of a malformed refusal
        self.stop = threading.Event()
        env = C.envelope('tools/call', {'name': 'get_bike_status', 'arguments': {'bikeId': 'VL-2048'}})
        self.body = json.dumps(env).encode()
        self.headers = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream',
                        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call',
                        'Mcp-Name': 'get_bike_status'}

    def one(self, conn):
        conn.request('POST', '/mcp', self.body, self.headers)
        r = conn.getresponse()
        raw = r.read()
        try:
            doc = json.loads(raw)
        except ValueError:
            doc = None
        if r.status == 200 and doc and 'result' in doc and not doc['result'].get('isError'):
            return 'admitted', None
        err = (doc or {}).get('error') or {}
        ra = r.getheader('Retry-After') or ''
        if (r.status == 429 and ra.isdigit() and int(ra) >= 1 and err.get('code') == -32029
                and (err.get('data') or {}).get('retryAfterSeconds') == int(ra)):
            return 'refused', None
        return 'bad', (r.status, ra, raw[:200])

    def worker(self):
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=10)
        while not self.stop.is_set():
            try:
                kind, what = self.one(conn)
            except (OSError, http.client.HTTPException) as e:
                kind, what = 'bad', ('connection', str(e))
                conn.close()
                conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=10)
            with self.lock:
                if kind == 'admitted':
                    self.admitted += 1
                elif kind == 'refused':
                    self.refused += 1
                else:
                    self.bad.append(what)
        conn.close()

    def paced(self, n, interval):
        """n calls, one every interval seconds, on one connection; (admitted, refused, bad)."""
        conn = http.client.HTTPConnection('127.0.0.1', self.port, timeout=10)
        seen = {'admitted': 0, 'refused': 0, 'bad': 0}
        for _ in range(n):
            seen[self.one(conn)[0]] += 1
            time.sleep(interval)
        conn.close()
        return seen['admitted'], seen['refused'], seen['bad']

    def run(self, seconds, workers=WORKERS):
        """Runs the load for seconds; (admitted, refused, bad, elapsed) of this run."""
        with self.lock:
            a0, r0, b0 = self.admitted, self.refused, len(self.bad)
        self.stop.clear()
        ts = [threading.Thread(target=self.worker) for _ in range(workers)]
        t0 = time.monotonic()
        for t in ts:
            t.start()
        time.sleep(seconds)
        self.stop.set()
        for t in ts:
            t.join()
        elapsed = time.monotonic() - t0
        with self.lock:
            return self.admitted - a0, self.refused - r0, self.bad[b0:], elapsed


def metric(mport, series):
    """The value of one exact series of an instance's /metrics (0 when absent)."""
    conn = http.client.HTTPConnection('127.0.0.1', mport, timeout=5)
    conn.request('GET', '/metrics')
    text = conn.getresponse().read().decode()
    conn.close()
    for line in text.splitlines():
        name, _, value = line.rpartition(' ')
        if name == series:
            return float(value)
    return 0.0


def main(tmp):
    db = f'budgets_it_{os.getpid()}'
    app_url, owner_url = C.fresh_database(db)
    cl = C.Cluster(tmp)
    try:
        env = dict(os.environ, DATABASE_URL=app_url, BIKAROO_AUTH='local', BIKAROO_LOCAL_SUBJECT='marie',
                   BIKAROO_LOCAL_CLIENT='customer-care-assistant', BIKAROO_LOG_LEVEL='info',
                   BIKAROO_RATE_STORE='database', BIKAROO_RATE_READS=str(PER_MINUTE),
                   BIKAROO_RATE_READ_BURST=str(BURST), BIKAROO_MAX_CONNECTIONS_PER_IP='0')
        env.pop('BIKAROO_MIGRATE_URL', None)
        names = [f'server{i}' for i in range(1, INSTANCES + 1)]
        ports = [cl.instance(n, env) for n in names]
        mports = [int(re.search(r'metrics at http://[^ ]*:(\d+)/metrics', open(cl.log[n]).read()).group(1))
                  for n in names]
        proxy = C.free_port()
        cl.nginx(cl.nginx_conf(f'127.0.0.1:{proxy}', [f'127.0.0.1:{p}' for p in ports]), '127.0.0.1', proxy)
        load = Load(proxy)
        per_s = PER_MINUTE / 60
        store_calls = lambda: sum(metric(m, 'bikaroo_rate_limit_store_calls_total{result="ok"}') for m in mports)

        # --- 0. within the budget
        within, refused, bad = load.paced(40, 0.125)
        calls0 = store_calls()
        print(f'# within the budget: 40 calls at 8/s, {within} admitted; {calls0:.0f} store calls: '
              f'{calls0 / 40:.3f} per call (leases of {max(1, min(16, BURST // 8))} calls per instance and '
              f'bucket, {INSTANCES} instances)', flush=True)
        ok(within == 40 and not refused and not bad, f'a caller within its budget is never refused: {within} of 40')
        ok(calls0 <= 40 / 2, f'leases: {calls0:.0f} store calls for 40 calls')

        # --- 1. the shared budget
        admitted, refused, bad, elapsed = load.run(SECONDS)
        budget = BURST + per_s * elapsed
        calls = store_calls() - calls0
        served = [metric(m, 'bikaroo_requests_total{transport="http",method="tools/call",name="get_bike_status",'
                            'outcome="ok",status="200"}') for m in mports]
        offered = admitted + refused + len(bad)
        print(f'# shared: {offered} calls offered in {elapsed:.1f} s ({offered / elapsed:.0f}/s) through '
              f'{INSTANCES} instances; admitted {admitted} (budget {BURST} + {per_s:.0f}/s x {elapsed:.1f} s = '
              f'{budget:.0f}), refused {refused}; per instance {", ".join(str(int(s)) for s in served)}; '
              f'{calls:.0f} store calls: {calls / max(admitted, 1):.3f} per admitted call, '
              f'{calls / max(offered, 1):.4f} per call', flush=True)
        ok(not bad, f'every call answered: admitted, or refused with 429 + Retry-After + -32029 '
           f'({len(bad)} otherwise: {bad[:3]})')
        ok(admitted <= budget + 1 and refused > admitted,
           f'the deployment admits at most its budget (+ one burst): {admitted} <= {budget:.0f}, '
           f'{refused} refused')
        ok(admitted >= 0.85 * budget,
           f'and most of it (leases are not wasted): {admitted} >= 85% of {budget:.0f}')
        ok(all(s > 0 for s in served), f'every instance served some of it: {[int(s) for s in served]}')
        audited = int(C.sql(owner_url, "SELECT count(*) FROM fleet.audit_log WHERE tool = 'get_bike_status'")[0][0])
        ok(audited == within + admitted, f'one audit row per admitted call, none for a refusal: {audited} '
           f'rows, {within + admitted} admitted')
        ok(calls <= admitted / 2, f'leases, not a store call per call: {calls:.0f} store calls for {admitted} '
           f'admitted and {refused} refused calls')

        # --- 2. the store unreachable: its table locked by another session
        locker = cl.lock_table('locker', owner_url, 'fleet.budgets', FALLBACK_SECONDS + 4)
        time.sleep(1)
        admitted, refused, bad, elapsed = load.run(FALLBACK_SECONDS)
        gauges = [metric(m, 'bikaroo_rate_limit_local_fallback') for m in mports]
        one = BURST + per_s * elapsed
        print(f'# store unreachable: {admitted + refused + len(bad)} calls in {elapsed:.1f} s, admitted {admitted} '
              f'(one budget {one:.0f}, {INSTANCES} local budgets at most {INSTANCES * one:.0f}), refused '
              f'{refused}; bikaroo_rate_limit_local_fallback {gauges}', flush=True)
        ok(not bad, f'with the store unreachable no call fails: admitted or 429 ({len(bad)} otherwise: {bad[:3]})')
        ok(gauges == [1.0] * INSTANCES, f'each instance says it is on local budgets (metrics): {gauges}')
        ok(one < admitted <= INSTANCES * (one + 1),
           f'each enforces its own budget: {one:.0f} < {admitted} <= {INSTANCES * one:.0f}')
        logs = [open(cl.log[n]).read() for n in names]
        ok(all('the budget store does not answer' in lg for lg in logs), 'and logs it (warn)')

        # --- 3. the store back
        locker.wait(30)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            load.run(1)
            gauges = [metric(m, 'bikaroo_rate_limit_local_fallback') for m in mports]
            if gauges == [0.0] * INSTANCES:
                break
        ok(gauges == [0.0] * INSTANCES, f'the lock released, the instances are back on the shared budget: {gauges}')
    except Exception as e:
        ok(False, f'budgets harness: {e}')
        cl.print_tails()
    finally:
        cl.close()
        C.drop_database(db)
    return 1 if ok.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
