"""One harness for nginx in front of N bikaroo-mcp instances on loopback, with the test
authorization server: used by the compose-topology test (tests/compose), the multi-instance
kill test (tests/cluster/suite.sh) and the soak (scripts/soak.sh). Every process it starts is
stopped by its PID (close(), also on exceptions); nothing binds outside 127.0.0.0/8."""
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def free_port(host='127.0.0.1'):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def port_open(host, port):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


class Tap:
    """A test's `ok - WHAT` / `not ok - WHAT` lines (what scripts/test.sh counts), with the
    failures counted: ok = Tap(); ok(cond, what); ... return 1 if ok.failures else 0."""

    def __init__(self):
        self.failures = 0

    def __call__(self, cond, what):
        print(f'{"ok" if cond else "not ok"} - {what}', flush=True)
        self.failures += 0 if cond else 1
        return cond


class Cluster:
    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = {}  # name -> Popen, in start order
        self.log = {}

    # --- processes
    def spawn(self, name, argv, env=None, cwd=None):
        path = os.path.join(self.tmp, f'{name}.log')
        out = open(path, 'ab')
        p = subprocess.Popen(argv, env=env, cwd=cwd or ROOT, stdin=subprocess.DEVNULL,
                             stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        self.procs[name] = p
        self.log[name] = path
        return p

    def stop(self, name, sig=signal.SIGTERM, timeout=15):
        """Sends sig to the process (and its group: a shell's children), waits; its exit code."""
        p = self.procs.get(name)
        if p is None or p.poll() is not None:
            return p.returncode if p else None
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return p.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            return p.wait()

    def close(self):
        for name in reversed(list(self.procs)):
            self.stop(name)

    def tail(self, name, n=30):
        try:
            with open(self.log[name], errors='replace') as f:
                return ''.join(f.readlines()[-n:])
        except OSError:
            return ''

    def print_tails(self, n=15):
        """The end of every process's log, as TAP comments (after a harness failure)."""
        for name in self.procs:
            print(f'# --- {name}\n# ' + self.tail(name, n).replace('\n', '\n# '))

    def wait(self, what, ok, seconds=30, name=None):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if ok():
                return
            if name and self.procs[name].poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f'{what} not ready' + (f':\n{self.tail(name)}' if name else ''))

    # --- the pieces
    def idp(self, resource, name='idp', port=None, extra=()):
        """The test authorization server on 127.0.0.1; its issuer URL."""
        ready = os.path.join(self.tmp, f'{name}.port')
        argv = ['node', 'tests/auth/as.mjs', '--ready', ready, '--resource', resource]
        if port:
            argv += ['--port', str(port)]
        self.spawn(name, argv + list(extra))
        self.wait(name, lambda: os.path.exists(ready) and open(ready).read().strip(), 90, name)
        return f'http://127.0.0.1:{open(ready).read().strip()}'

    def instance(self, name, env, binary=None, port=0, listen='127.0.0.1'):
        """bikaroo-mcp serve with env on listen:port (0: any); its port once it serves."""
        ready = os.path.join(self.tmp, f'{name}.ready')
        # Each instance's metrics on a port of its own (several share one loopback here).
        e = dict({'BIKAROO_METRICS_LISTEN': f'{listen}:0'}, **env)
        e.update(BIKAROO_LISTEN=listen, BIKAROO_PORT=str(port), BIKAROO_READY_FILE=ready)
        self.spawn(name, [binary or os.environ['BIKAROO_BIN'], 'serve'], env=e)
        self.wait(name, lambda: os.path.exists(ready) and open(ready).read().strip(), 30, name)
        return int(open(ready).read().strip())

    def lock_table(self, name, url, table, seconds):
        """Another session holding table ACCESS EXCLUSIVE for seconds (as VACUUM FULL or an
        administrator's LOCK would): the psql process, stopped by close() if still running."""
        return self.spawn(name, ['psql', '-X', '-q', url, '-c',
                                 f'BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE; '
                                 f'SELECT pg_sleep({seconds}); COMMIT;'])

    def nginx_conf(self, listen, upstreams=None, tls=False):
        """docker/nginx.conf with its `harness:` lines rewritten: listen on listen (one address or a
        list), and when
        upstreams is given (host:port strings) these servers instead of the service name; the
        paths it writes in this cluster's folder. Plain HTTP (the lines marked `harness: tls`
        left out) unless tls: then as the file says (its certificate in /run/secrets)."""
        with open(os.path.join(ROOT, 'docker/nginx.conf')) as f:
            conf = f.read()
        d = os.path.join(self.tmp, 'nginx')
        os.makedirs(d, exist_ok=True)
        conf = conf.replace('/tmp/', d + '/')
        if not tls:
            conf = re.sub(r'^.*# harness: tls\n', '', conf, flags=re.M)
        listens = [listen] if isinstance(listen, str) else listen
        ssl = ' ssl' if tls else ''
        conf = re.sub(r'^(\s*)listen \S+(?: ssl)?; # harness: listen$',
                      lambda m: '\n'.join(f'{m.group(1)}listen {a}{ssl};' for a in listens), conf, flags=re.M)
        if upstreams is not None:
            def servers(m):
                opts = m.group(2)
                return '\n'.join(f'{m.group(1)}server {u}{opts};' for u in upstreams)
            conf = re.sub(r'^(\s*)server \S+?( [^;]*)?; # harness: upstream$', servers, conf, flags=re.M)
        path = os.path.join(d, 'nginx.conf')
        with open(path, 'w') as f:
            f.write(conf)
        return path

    def nginx(self, conf, host, port, name='nginx'):
        self.spawn(name, ['nginx', '-e', 'stderr', '-c', conf, '-g', 'daemon off;'])
        self.wait(name, lambda: port_open(host, port), 15, name)


def mint(issuer, sub, client, scope, resource):
    q = urllib.parse.urlencode({'sub': sub, 'client': client, 'scope': scope, 'resource': resource})
    with urllib.request.urlopen(f'{issuer}/mint?{q}', timeout=30) as r:
        return json.load(r)['access_token']


def fresh_database(name):
    """A database of the test cluster migrated from scratch with the demo data (owner role); its
    (app URL, owner URL). Dropped by drop_database(name)."""
    su, owner, app = os.environ['PGTMP_SUPER_URL'], os.environ['BIKAROO_MIGRATE_URL'], os.environ['DATABASE_URL']
    drop_database(name)
    subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', su, '-c', f'CREATE DATABASE {name} OWNER fleet_owner'],
                   check=True, stdout=subprocess.DEVNULL)
    swap = lambda u: re.sub(r'@/[^?]*\?', f'@/{name}?', u, count=1)
    owner_url, app_url = swap(owner), swap(app)
    env = dict(os.environ, DATABASE_URL=owner_url, BIKAROO_MIGRATE_URL=owner_url)
    subprocess.run([os.environ['BIKAROO_BIN'], 'migrate'], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    subprocess.run(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', owner_url, '-f',
                    os.path.join(ROOT, 'migrations/demo/demo-data.sql')], check=True, stdout=subprocess.DEVNULL)
    return app_url, owner_url


def drop_database(name):
    subprocess.run(['psql', '-X', '-q', os.environ['PGTMP_SUPER_URL'], '-c',
                    f'DROP DATABASE IF EXISTS {name} WITH (FORCE)'], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def sql(url, query):
    """The rows of query (psql, unaligned, tab-separated)."""
    out = subprocess.run(['psql', '-X', '-q', '-tA', '-F', '\t', '-v', 'ON_ERROR_STOP=1', url, '-c', query],
                         check=True, capture_output=True, text=True).stdout
    return [line.split('\t') for line in out.splitlines() if line]


def envelope(method, params, rid=1):
    p = dict(params)
    p['_meta'] = {'io.modelcontextprotocol/protocolVersion': '2026-07-28',
                  'io.modelcontextprotocol/clientCapabilities': {}}
    return {'jsonrpc': '2.0', 'id': rid, 'method': method, 'params': p}


def call(url, token, method, params, name=None, timeout=10, rid=1, caps=None, context=None):
    """One MCP 2026-07-28 request (raw HTTP; https with the ssl context given); (status, parsed
    body or None). Raises OSError on connection errors (refused, reset, timeout)."""
    env = envelope(method, params, rid)
    if caps:
        env['params']['_meta']['io.modelcontextprotocol/clientCapabilities'] = caps
    body = json.dumps(env).encode()
    h = {'Content-Type': 'application/json', 'Accept': 'application/json, text/event-stream',
         'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method}
    if name:
        h['Mcp-Name'] = name
    if token:
        h['Authorization'] = f'Bearer {token}'
    req = urllib.request.Request(url, data=body, headers=h, method='POST')
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=context) as r:
            raw = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        raw = e.read()
        status = e.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None
