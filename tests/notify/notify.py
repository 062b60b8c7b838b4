"""Issue 20 item 6: sd_notify readiness, stopping and watchdog, observed on a NOTIFY_SOCKET of
this test's own (a unix datagram socket, as systemd provides). The server runs with tokens
(BIKAROO_AUTH=jwt); its database and its issuer are behind relays of this test's own, each of
which refuses connections, passes them on, or holds them unanswered on demand.
1. Both refused at start: the server starts and serves /readyz (503), no READY=1. The database
   relay opened: still none (/readyz names the issuer's keys). The issuer's opened: READY=1, once.
2. WATCHDOG_USEC=400000: WATCHDOG=1 about every 200 ms while serving.
3. The event loops frozen (each of their http-loop threads stopped with ptrace, the rest of the
   process running, the watchdog's thread included), as a deadlock would leave them:
   GET /healthz through the listening socket is not answered, and no WATCHDOG=1 comes; once the
   threads run again, the pings resume.
4. SIGTERM: STOPPING=1, then exit 0.        python3 notify.py TMPDIR"""
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402

ok = C.Tap()


class Listener:
    """The NOTIFY_SOCKET: every datagram with the time it came."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.got = []  # (monotonic time, text)
        self.done = False
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        while not self.done:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            self.got.append((time.monotonic(), data.decode()))

    def times(self, assignment, since=0.0):
        return [t for t, m in self.got if t >= since and assignment in m.split('\n')]

    def close(self):
        self.done = True
        self.t.join()
        self.sock.close()


class Relay:
    """127.0.0.1:port -> target (a unix socket path, or a TCP port on 127.0.0.1), in one of three
    modes: closed (connections refused), open (passed on), hold (accepted, never answered)."""

    def __init__(self, target):
        self.target, self.port = target, C.free_port()
        self.srv, self.mode, self.held = None, 'closed', []

    def set(self, mode):
        if mode != 'closed' and not self.srv:
            self.srv = socket.socket()
            self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.srv.bind(('127.0.0.1', self.port))
            self.srv.listen(64)
            threading.Thread(target=self.accept, daemon=True).start()
        self.mode = mode
        if mode != 'hold':
            for c in self.held:
                c.close()
            self.held = []

    def accept(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            if self.mode == 'hold':
                self.held.append(c)
                continue
            if isinstance(self.target, str):
                u = socket.socket(socket.AF_UNIX)
                u.connect(self.target)
            else:
                u = socket.create_connection(('127.0.0.1', self.target))
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.set('open')
        if self.srv:
            self.srv.close()


class Freeze:
    """Stops the threads of pid named comm with ptrace (PTRACE_SEIZE, then PTRACE_INTERRUPT: only
    those threads stop, the rest of the process runs) until thaw(). Raises OSError when ptrace is
    not allowed here."""
    SEIZE, INTERRUPT, DETACH, WALL = 0x4206, 0x4207, 17, 0x40000000

    def __init__(self, pid, comm):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        self.tids = [int(t) for t in os.listdir(f'/proc/{pid}/task')
                     if open(f'/proc/{pid}/task/{t}/comm').read().strip() == comm]
        self.stopped = []
        for tid in self.tids:
            for req in (self.SEIZE, self.INTERRUPT):
                if self.libc.ptrace(req, tid, None, None) != 0:
                    self.thaw()
                    raise OSError(ctypes.get_errno(), f'ptrace {req:#x} of thread {tid}')
            os.waitpid(tid, self.WALL)
            self.stopped.append(tid)

    def thaw(self):
        for tid in self.stopped:
            self.libc.ptrace(self.DETACH, tid, None, None)
        self.stopped = []


def gaps(times):
    return [b - a for a, b in zip(times, times[1:])]


def main(tmp):
    lst = Listener(os.path.join(tmp, 'notify.sock'))
    db_relay = Relay(os.path.join(os.environ['PGTMP_SOCK'], '.s.PGSQL.5432'))
    # DATABASE_URL through the relay, every other connection parameter pinned as the test's.
    query = re.sub(r'host=[^&]*&port=[^&]*&hostaddr=[^&]*',
                   f'host=127.0.0.1&port={db_relay.port}&hostaddr=127.0.0.1', os.environ['PGTMP_QUERY'])
    db = re.search(r'@/([^?]*)\?', os.environ['DATABASE_URL']).group(1)
    cl = C.Cluster(tmp)
    relays = [db_relay]
    try:
        # The test authorization server, its issuer identifier the relay's URL.
        as_port = C.free_port()
        iss_relay = Relay(as_port)
        relays.append(iss_relay)
        issuer = f'http://127.0.0.1:{iss_relay.port}'
        resource = 'http://127.0.0.1:1/mcp'
        cl.idp(resource, port=as_port, extra=['--issuer', issuer])
        env = dict(os.environ, DATABASE_URL=f'postgresql://fleet_app@/{db}?{query}', BIKAROO_AUTH='jwt',
                   BIKAROO_AUTH_ISSUER=issuer, BIKAROO_AUTH_INSECURE_LOOPBACK='1', BIKAROO_RESOURCE_URI=resource,
                   BIKAROO_AUTH_TIMEOUT_MS='2000', BIKAROO_AUTH_REFRESH_SECONDS='0',
                   NOTIFY_SOCKET=os.path.join(tmp, 'notify.sock'), WATCHDOG_USEC='400000',
                   BIKAROO_DB_RETRY_MAX_MS='300', BIKAROO_LOG_LEVEL='info', BIKAROO_RATE_READS='0')
        port = cl.instance('server', env)
        url = f'http://127.0.0.1:{port}'
        readyz = lambda: subprocess.run(['curl', '-s', '-w', ' %{http_code}', f'{url}/readyz'],
                                        capture_output=True, text=True).stdout
        time.sleep(1.5)
        r = readyz()
        ok(r.endswith(' 503') and not lst.times('READY=1'),
           f'database and issuer unreachable: the server serves (/readyz {r[-3:]}) and sends no READY=1')
        db_relay.set('open')
        time.sleep(2)
        r = readyz()
        ok(r.endswith(' 503') and 'issuer' in r and 'database' not in r and not lst.times('READY=1'),
           f'the database reachable, the issuer\'s keys not: still no READY=1 (/readyz: {r[:160]})')
        t_keys = time.monotonic()
        iss_relay.set('open')
        cl.wait('READY=1', lambda: lst.times('READY=1'), 20)
        t_ready = lst.times('READY=1')[0]
        ok(len(lst.times('READY=1')) == 1, f'READY=1 once the issuer\'s keys are there too, {t_ready - t_keys:.1f} s '
           f'after it answered, once')

        # Pings while serving.
        time.sleep(2)
        pings = lst.times('WATCHDOG=1', since=t_ready)
        ok(len(pings) >= 6 and max(gaps(pings)) < 0.4,
           f'WATCHDOG=1 every half of WATCHDOG_USEC while serving: {len(pings)} in about 2 s, longest gap '
           f'{max(gaps(pings) or [0]):.2f} s')

        # The event loops frozen, as a deadlock would leave them.
        try:
            frozen = Freeze(cl.procs['server'].pid, 'http-loop')
        except OSError as e:
            frozen = None
            print(f'skip - no WATCHDOG=1 while the event loops are stuck: ptrace is not allowed here ({e})')
        if frozen:
            t_stuck = time.monotonic()
            time.sleep(2)
            t_free = time.monotonic()
            frozen.thaw()
            time.sleep(1)
            during = [t for t in lst.times('WATCHDOG=1') if t_stuck + 0.3 <= t <= t_free]
            after = lst.times('WATCHDOG=1', since=t_free)
            log = open(cl.log['server']).read()
            ok(len(frozen.tids) >= 1 and not during,
               f'no WATCHDOG=1 while the {len(frozen.tids)} event loops\' threads are stopped '
               f'({t_free - t_stuck:.1f} s, {len(during)} pings)')
            st = subprocess.run(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', f'{url}/healthz'],
                                capture_output=True, text=True).stdout
            ok(len(after) >= 3 and st == '200', f'they run again: {len(after)} pings in the second after, /healthz {st}')
            ok('watchdog: GET /healthz' in log and 'answer again' in log, 'the server logs the missed probes')

        unit = open(os.path.join(C.ROOT, 'packaging/bikaroo-mcp.service.in')).read()
        ok(re.search(r'^Type=notify$', unit, re.M) and re.search(r'^NotifyAccess=main$', unit, re.M)
           and re.search(r'^WatchdogSec=\d+s$', unit, re.M),
           'the systemd unit is Type=notify, NotifyAccess=main, with a WatchdogSec')

        # SIGTERM: STOPPING=1, then exit 0.
        t_term = time.monotonic()
        rc = cl.stop('server', signal.SIGTERM)
        # The listener reads its socket on a thread of its own: the datagram sent just before the
        # exit may still be on its way to it (bounded wait).
        until = time.monotonic() + 2
        while not lst.times('STOPPING=1', since=t_term) and time.monotonic() < until:
            time.sleep(0.05)
        ok(lst.times('STOPPING=1', since=t_term) and rc == 0, f'SIGTERM: STOPPING=1, then exit {rc}')
    except Exception as e:
        ok(False, f'notify harness: {e!r}')
        cl.print_tails()
    finally:
        cl.close()
        for r in relays:
            r.close()
        lst.close()
    return 1 if ok.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
