"""SIGHUP reloads the settings marked reloadable: the requestState key ring (a rotation step
without a restart) and the log level, with nothing in flight dropped. One instance (local mode,
marie through careful-assistant, whose reports need a server-side confirmation), its settings in
a BIKAROO_SETTINGS_FILE rewritten before each SIGHUP:
  start   BIKAROO_STATE_SECRET=K1
  R1      K2, with K1 in BIKAROO_STATE_SECRET_PREVIOUS
  R2      K2 alone (K1 removed)
  R3      a secret too short: refused, the ring in use stays
  R4      K2, BIKAROO_LOG_LEVEL=warn and BIKAROO_CALLS_MAX changed (not reloadable: said)
A load of get_bike_status runs from before R1 to after R4: every call is answered.
python3 reload.py TMPDIR"""
import base64
import json
import os
import secrets
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402
from rotation import begin, complete, reports  # noqa: E402

ok = C.Tap()


def sealed_by(state):
    """The key id a requestState names ("k" of its payload)."""
    body = state.split('.')[0]
    return json.loads(base64.urlsafe_b64decode(body + '=' * (-len(body) % 4)))['k']


class Load:
    """Threads calling get_bike_status on port until stop(): every answer counted."""

    def __init__(self, port, threads=3):
        self.url = f'http://127.0.0.1:{port}/mcp'
        self.done = threading.Event()
        self.answered, self.bad = 0, []
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.run) for _ in range(threads)]
        for t in self.threads:
            t.start()

    def run(self):
        args = {'name': 'get_bike_status', 'arguments': {'bikeId': 'VL-2048'}}
        while not self.done.is_set():
            try:
                st, body = C.call(self.url, None, 'tools/call', args, name='get_bike_status')
                good = st == 200 and ((body or {}).get('result') or {}).get('structuredContent')
                what = None if good else f'{st} {json.dumps(body)[:200]}'
            except OSError as e:
                what = f'no answer: {e}'
            with self.lock:
                if what:
                    self.bad.append(what)
                else:
                    self.answered += 1

    def stop(self):
        self.done.set()
        for t in self.threads:
            t.join(30)


def main(tmp):
    db = f'reload_it_{os.getpid()}'
    app_url, owner_url = C.fresh_database(db)
    cl = C.Cluster(tmp)
    k1, k2 = secrets.token_hex(24), secrets.token_hex(24)
    settings = os.path.join(tmp, 'bikaroo-mcp.env')

    def write(*lines):
        with open(settings + '.new', 'w') as f:
            f.write('# rewritten before each SIGHUP\n' + ''.join(f'{line}\n' for line in lines))
        os.replace(settings + '.new', settings)

    env = dict(os.environ, DATABASE_URL=app_url, BIKAROO_AUTH='local', BIKAROO_LOCAL_SUBJECT='marie',
               BIKAROO_LOCAL_CLIENT='careful-assistant', BIKAROO_LOG_LEVEL='info', BIKAROO_RATE_READS='0',
               BIKAROO_SETTINGS_FILE=settings)
    for name in ('BIKAROO_MIGRATE_URL', 'BIKAROO_STATE_SECRET', 'BIKAROO_STATE_SECRET_PREVIOUS'):
        env.pop(name, None)
    load = None
    try:
        write(f'BIKAROO_STATE_SECRET={k1}')
        port = cl.instance('reload', env)
        proc = cl.procs['reload']

        def log():
            return open(cl.log['reload'], errors='replace').read()

        def hup(what, until):
            proc.send_signal(signal.SIGHUP)
            cl.wait(f'the reload of {what}', lambda: until(log()), 20, 'reload')

        def key_line():
            return [line for line in log().splitlines() if 'requestState: sealed with key' in line][-1]

        id1 = key_line().split('sealed with key ')[1].split(',')[0].strip()
        args_a, state_a = begin(port, 'VL-2048')  # sealed with K1 before the rotation
        args_b, state_b = begin(port, 'VL-2051')
        load = Load(port)
        time.sleep(1)

        write(f'BIKAROO_STATE_SECRET={k2}', f'BIKAROO_STATE_SECRET_PREVIOUS={k1}')
        hup('R1', lambda text: text.count('reload: done') == 1)
        line = key_line()
        id2 = line.split('sealed with key ')[1].split(',')[0].strip()
        ok(id2 != id1 and f'also accepted: {id1}' in line,
           f'R1: the instance seals with K2 ({id2}) and still accepts K1 ({id1}), without a restart: {line[-80:]}')
        st, body = complete(port, args_a, state_a)
        rid = ((body or {}).get('result') or {}).get('structuredContent', {}).get('reportId')
        ok(st == 200 and rid and reports(owner_url, 'VL-2048') == [[rid]],
           f'a confirmation sealed with K1 before R1 completes after it: {rid} ' + ('' if rid else json.dumps(body)[:300]))
        args_c, state_c = begin(port, 'VL-2054')
        ok(sealed_by(state_c) == id2, f'a confirmation begun after R1 is sealed with K2 ({sealed_by(state_c)})')

        write(f'BIKAROO_STATE_SECRET={k2}')
        hup('R2', lambda text: text.count('reload: done') == 2)
        st, body = complete(port, args_b, state_b)
        err = (body or {}).get('error') or {}
        ok(err.get('code') == -32602 and 'rotated out' in err.get('message', '') and reports(owner_url, 'VL-2051') == [],
           f'R2: a confirmation sealed with K1, now removed, is refused saying so, nothing written: {json.dumps(err)[:200]}')

        write('BIKAROO_STATE_SECRET=too-short-to-be-a-secret')
        hup('R3', lambda text: 'nothing changed, the key ring in use stays' in text)
        st, body = complete(port, args_c, state_c)
        rid = ((body or {}).get('result') or {}).get('structuredContent', {}).get('reportId')
        ok(st == 200 and rid,
           f'R3: a refused ring (a short secret) changes nothing: the K2 confirmation still completes ({rid})')

        write(f'BIKAROO_STATE_SECRET={k2}', 'BIKAROO_LOG_LEVEL=warn', 'BIKAROO_CALLS_MAX=5')
        hup('R4', lambda text: 'BIKAROO_CALLS_MAX changed but takes effect only at the next start' in text)
        time.sleep(1)
        ok(log().count('reload: done') == 2,
           'R4: BIKAROO_LOG_LEVEL=warn is in effect at once (its own "done" line, info, is not written); '
           'BIKAROO_CALLS_MAX is said to wait for a restart')

        load.stop()
        ok(not load.bad and load.answered > 50 and proc.poll() is None,
           f'a load across the four SIGHUPs: {load.answered} calls, every one answered '
           + (f'(not: {len(load.bad)}, e.g. {load.bad[:2]})' if load.bad else '(none refused or dropped)'))
        ok(cl.stop('reload') == 0, 'the instance stops with 0 after them')
    except Exception as e:
        ok(False, f'reload harness: {e}')
        cl.print_tails()
    finally:
        if load:
            load.stop()
        cl.close()
        C.drop_database(db)
    return 1 if ok.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
