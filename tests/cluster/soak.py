"""make soak (issue 13 item 7; not in make test): SOAK_SECONDS (600) of mixed load against two
bikaroo-mcp instances behind nginx (the harness cluster.py): reads, reports with idempotency keys,
lists, listen streams opened and closed, and bad requests. Every 10 s each instance's RSS, open
file descriptors and the database connections of the login role are sampled; over the second
half each must stay flat. Errors must be zero apart from the intended 4xx of the bad requests.
Prints the samples and ok / not ok lines.   python3 soak.py TMPDIR"""
import http.client
import json
import os
import random
import secrets
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import cluster as C  # noqa: E402

SECONDS = int(os.environ.get('SOAK_SECONDS', '600'))
SAMPLE_S = 10
PAUSE_S = 0.02  # per request and thread: a bounded load (about 200 requests/s in all)
FR_PAR = [f'VL-{n}' for n in range(1000, 5000) if n % 3 == 2]
failures = 0


def ok(cond, what):
    global failures
    print(f'{"ok" if cond else "not ok"} - {what}', flush=True)
    failures += 0 if cond else 1


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.c = {}

    def add(self, k):
        with self.lock:
            self.c[k] = self.c.get(k, 0) + 1


def raw(port, body, headers, path='/mcp'):
    conn = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
    try:
        conn.request('POST', path, body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


def main(tmp):
    db = f'soak_{os.getpid()}'
    app_url, owner_url = C.fresh_database(db)
    cl = C.Cluster(tmp)
    counts = Counts()
    try:
        proxy = C.free_port()
        url = f'http://127.0.0.1:{proxy}/mcp'
        issuer = cl.idp(url)
        env = dict(os.environ, DATABASE_URL=app_url, BIKAROO_AUTH='jwt', BIKAROO_AUTH_ISSUER=issuer,
                   BIKAROO_AUTH_INSECURE_LOOPBACK='1', BIKAROO_RESOURCE_URI=url,
                   BIKAROO_STATE_SECRET=secrets.token_hex(24), BIKAROO_LOG_LEVEL='warn',
                   BIKAROO_RATE_WRITES='0', BIKAROO_RATE_READS='0', BIKAROO_KEEPALIVE_SECONDS='2')
        env.pop('BIKAROO_MIGRATE_URL', None)
        ports = [cl.instance(f'server{i}', env) for i in (1, 2)]
        cl.nginx(cl.nginx_conf(f'127.0.0.1:{proxy}', [f'127.0.0.1:{p}' for p in ports]), '127.0.0.1', proxy)
        # Tokens live 600 s by default at the test issuer: each worker mints again every 5 minutes.
        mint = lambda: C.mint(issuer, 'marie', 'customer-care-assistant', 'fleet:read fleet:report', url)
        end = time.monotonic() + SECONDS

        def expect(kind, st, body, want=200):
            if st == want and (want != 200 or (body and 'error' not in body and not (body.get('result') or {}).get('isError'))):
                counts.add(f'{kind} {st}')
            else:
                counts.add(f'ERROR {kind} {st}')
                if counts.c.get(f'ERROR {kind} {st}') == 1:
                    print(f'# first unexpected {kind}: {st} {json.dumps(body)[:300]}', flush=True)
                    if kind == 'listen':
                        print(f'# {last_listen[0][:600]!r}', flush=True)

        def loop(kind, fn):
            token, minted = mint(), time.monotonic()
            while time.monotonic() < end:
                if time.monotonic() - minted > 300:
                    token, minted = mint(), time.monotonic()
                try:
                    fn(token)
                except (OSError, http.client.HTTPException) as e:
                    counts.add(f'ERROR {kind} connection')
                    print(f'# {kind}: {e}', flush=True)
                time.sleep(PAUSE_S)

        def read(token):
            st, body = C.call(url, token, 'tools/call', {'name': 'get_bike_status', 'arguments': {'bikeId': random.choice(FR_PAR)}}, name='get_bike_status')
            expect('read', st, body)

        def report(token):
            key = secrets.token_hex(8)
            args = {'bikeId': random.choice(FR_PAR), 'issue': 'flat_tire', 'description': 'soak', 'idempotencyKey': key}
            st, body = C.call(url, token, 'tools/call', {'name': 'report_damaged_bike', 'arguments': args}, name='report_damaged_bike')
            expect('report', st, body)

        def lists(token):
            for m in ('tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'):
                st, body = C.call(url, token, m, {})
                expect('list', st, body)

        last_listen = ['']

        def listen(token):
            # A stream held 1-3 s, then closed by the client (the server must free it at once).
            s = socket.create_connection(('127.0.0.1', proxy), timeout=10)
            try:
                body = json.dumps(C.envelope('subscriptions/listen', {'notifications': {'resourceSubscriptions': [
                    f'bikaroo://fleet/bikes/{random.choice(FR_PAR)}']}})).encode()
                head = (f'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{proxy}\r\nContent-Type: application/json\r\n'
                        'Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n'
                        f'Mcp-Method: subscriptions/listen\r\nAuthorization: Bearer {token}\r\n'
                        f'Content-Length: {len(body)}\r\n\r\n').encode()
                s.sendall(head + body)
                got, t_end = '', time.monotonic() + 5
                while 'acknowledged' not in got and time.monotonic() < t_end:
                    chunk = s.recv(4096).decode(errors='replace')
                    if not chunk:
                        break
                    got += chunk
                st = int(got.split(' ', 2)[1]) if got.startswith('HTTP/1.1 ') else 0
                last_listen[0] = got
                expect('listen', st, {'acknowledged': True} if 'acknowledged' in got else None)
                time.sleep(random.uniform(1, 3))
            finally:
                s.close()

        def bad(token):
            h = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream',
                 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Authorization': f'Bearer {token}'}
            expect('bad: unparseable JSON', raw(proxy, b'{"jsonrpc":', h), None, 400)
            expect('bad: no token', raw(proxy, b'{}', {k: v for k, v in h.items() if k != 'Authorization'}), None, 401)
            st, body = C.call(url, token, 'tools/call', {'name': 'no_such_tool', 'arguments': {}}, name='no_such_tool')
            counts.add(f'bad: unknown tool {st}' if st in (200, 400, 404) and body and 'error' in body else f'ERROR bad: unknown tool {st}')
            st, body = C.call(url, token, 'tools/call', {'name': 'get_bike_status', 'arguments': {'bikeId': 'VL-2047'}}, name='get_bike_status')
            counts.add('bad: other region (tool error)' if st == 200 and (body.get('result') or {}).get('isError') else f'ERROR bad: other region {st}')

        threads = [threading.Thread(target=loop, args=(k, f)) for k, f in
                   (('read', read), ('read', read), ('report', report), ('list', lists), ('listen', listen),
                    ('listen', listen), ('bad', bad))]
        for t in threads:
            t.start()
        pids = [cl.procs['server1'].pid, cl.procs['server2'].pid]
        samples = []
        t0 = time.monotonic()
        while time.monotonic() < end:
            time.sleep(SAMPLE_S)
            row = {'t': round(time.monotonic() - t0)}
            for i, pid in enumerate(pids, 1):
                with open(f'/proc/{pid}/status') as f:
                    row[f'rss{i}'] = next(int(l.split()[1]) for l in f if l.startswith('VmRSS:'))
                row[f'fd{i}'] = len(os.listdir(f'/proc/{pid}/fd'))
            row['db'] = int(C.sql(owner_url, "SELECT count(*) FROM pg_stat_activity WHERE usename = 'fleet_app'")[0][0])
            with counts.lock:
                row['requests'] = sum(v for k, v in counts.c.items())
            samples.append(row)
            print('# ' + ' '.join(f'{k}={v}' for k, v in row.items()), flush=True)
        for t in threads:
            t.join()
        second = samples[len(samples) // 2:]
        # Flat: no trend over the second half, the mean of its last three samples against the
        # mean of its first three (single samples move with the streams open at that instant).
        for key, label, slack in (('rss1', 'server1 RSS (KiB)', None), ('rss2', 'server2 RSS (KiB)', None),
                                  ('fd1', 'server1 open fds', 3), ('fd2', 'server2 open fds', 3),
                                  ('db', 'database connections of fleet_app', 1)):
            vals = [r[key] for r in second]
            head, tail = vals[:3], vals[-3:]
            drift = sum(tail) / len(tail) - sum(head) / len(head)
            allowed = slack if slack is not None else max(1024, head[0] // 50)  # RSS: 2 %, at least 1 MiB
            ok(drift <= allowed, f'{label} flat over the second half: {min(vals)}..{max(vals)}, '
               f'drift {drift:+.1f} (allowed {allowed})')
        errors = {k: v for k, v in counts.c.items() if k.startswith('ERROR')}
        total = sum(counts.c.values())
        ok(not errors, f'{total} requests in {SECONDS} s, errors apart from the intended 4xx: {errors or 0}; '
           f'by kind: {dict(sorted(counts.c.items()))}')
    except Exception as e:
        ok(False, f'soak harness: {e}')
        for name in cl.procs:
            print(f'# --- {name}\n# ' + cl.tail(name, 15).replace('\n', '\n# '))
    finally:
        cl.close()
        C.drop_database(db)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
