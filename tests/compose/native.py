"""The compose topology run natively (no container engine here): every service of
`docker-compose config` started with the command, entrypoint, environment and secrets the
compose file declares, then the official client with a token from the demo identity provider
through the proxy. Run inside a private mount namespace (suite.sh: unshare -m), where this
script lays out what the containers would see:
  /usr            the image's `make install PREFIX=/usr` (the build stage's command) over the
                  machine's, so `bikaroo-mcp` and /usr/share/bikaroo-mcp are the image's
  /run/secrets    the secrets' files (compose bind-mounts them there)
  /etc/hosts      each service name on a loopback address of its own (127.X.Y.2 ...), the
                  server's replicas sharing one name as Docker's DNS answers them
Translated, and only this: 0.0.0.0 in a command or environment becomes the service's own
address, 127.0.0.1 in a healthcheck too (a container's loopback is its own), `$$` is compose's
escaped `$`, the demo idp's /idp folder is the repository, and published ports are served on the
host side (127.0.0.1:PUBLIC). The db service is a PostgreSQL 15 cluster started like the image's
entrypoint does (initdb with POSTGRES_PASSWORD_FILE, then docker-entrypoint-initdb.d/* as
postgres over the local socket), password authentication on TCP.
    python3 native.py TMP STAGE CONFIG.yml PUBLIC_PORT"""
import http.client
import json
import ssl
import urllib.error
import urllib.request
import re
import os
import random
import shlex
import signal
import subprocess
import sys
import time

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402

PG = '/usr/lib/postgresql/15/bin'
IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
failures = 0


def ok(cond, what):
    global failures
    print(f'{"ok" if cond else "not ok"} - {what}', flush=True)
    failures += 0 if cond else 1
    return cond


def sh(*argv, **kw):
    return subprocess.run(list(argv), check=True, **kw)


def unescape(v):
    return v.replace('$$', '$') if isinstance(v, str) else v


def as_list(v):
    if v is None:
        return []
    return shlex.split(v) if isinstance(v, str) else [unescape(x) for x in v]


def main(tmp, stage, config_path, public):
    cfg = yaml.safe_load(open(config_path))
    services = cfg['services']
    public = int(public)
    # Addresses: one per service, one per replica.
    # A block of 127.0.0.0/8 of this run's own, so that two runs at once (other developers'
    # make test on one machine) never meet on a service's fixed port.
    net = f'127.{random.randint(1, 254)}.{random.randint(0, 254)}'
    addr, hosts, n = {}, ['127.0.0.1 localhost'], 2
    for name, svc in services.items():
        reps = int((svc.get('deploy') or {}).get('replicas', 1))
        addr[name] = []
        for _ in range(reps):
            addr[name].append(f'{net}.{n}')
            hosts.append(f'{net}.{n} {name}')
            n += 1
    with open(f'{tmp}/hosts', 'w') as f:
        f.write('\n'.join(hosts) + '\n')
    # Secrets where compose mounts them, readable as a bind mount of the 0644 file is.
    os.makedirs(f'{tmp}/run/secrets')
    for sname, s in cfg.get('secrets', {}).items():
        with open(s['file']) as src, open(f'{tmp}/run/secrets/{sname}', 'w') as dst:
            dst.write(src.read())
        os.chmod(f'{tmp}/run/secrets/{sname}', 0o644)
    sh('mount', '--make-rprivate', '/')
    sh('mount', '-t', 'overlay', 'overlay', '-o', f'lowerdir={stage}/usr:/usr', '/usr')
    sh('mount', '-t', 'overlay', 'overlay', '-o', f'lowerdir={tmp}/run:/run', '/run')
    sh('mount', '--bind', f'{tmp}/hosts', '/etc/hosts')

    cl = C.Cluster(tmp)

    def env_of(svc, me):
        e = {'PATH': IMAGE_PATH, 'HOME': '/nonexistent'}
        for k, v in (svc.get('environment') or {}).items():
            e[k] = unescape(str(v)).replace('0.0.0.0', me)
        return e

    def argv_of(svc, me, image_entrypoint):
        ep = as_list(svc.get('entrypoint')) or image_entrypoint
        return [a.replace('0.0.0.0', me) for a in ep + as_list(svc.get('command'))]

    def healthy(svc, me, seconds):
        test = (svc.get('healthcheck') or {}).get('test')
        if not test:
            return True
        # The container's loopback is the service's own address; a Host header stays as sent.
        kind, rest = test[0], [re.sub(r'(?<!Host: )127\.0\.0\.1', me, unescape(x)) for x in test[1:]]
        argv = ['/bin/sh', '-c', rest[0]] if kind == 'CMD-SHELL' else rest
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if subprocess.run(argv, env=env_of(svc, me), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return True
            time.sleep(0.3)
        return False

    try:
        # --- db: postgres:15's entrypoint, natively.
        db, me = services['db'], addr['db'][0]
        dbenv = env_of(db, me)
        pgdir = f'{tmp}/pg'
        os.makedirs(f'{pgdir}/sock')
        sh('chown', '-R', 'postgres:postgres', pgdir)
        os.chmod(tmp, 0o755)
        sh('runuser', '-u', 'postgres', '--', f'{PG}/initdb', '-D', f'{pgdir}/data', '-U', 'postgres',
           '-E', 'UTF8', '--locale=C', '--auth-local=trust', '--auth-host=scram-sha-256',
           f'--pwfile={dbenv["POSTGRES_PASSWORD_FILE"]}', '-N', stdout=subprocess.DEVNULL)
        with open(f'{pgdir}/data/pg_hba.conf', 'w') as f:
            f.write('local all all trust\nhost all all 127.0.0.0/8 scram-sha-256\n')
        cl.spawn('db', ['runuser', '-u', 'postgres', '--', f'{PG}/postgres', '-D', f'{pgdir}/data',
                        '-c', f'listen_addresses={me}', '-c', 'port=5432', '-c',
                        f'unix_socket_directories={pgdir}/sock', '-c', 'fsync=off'])
        cl.wait('db socket', lambda: os.path.exists(f'{pgdir}/sock/.s.PGSQL.5432'), 30, 'db')
        time.sleep(0.5)
        initdb_dir = next(v.split(':')[0] for v in db['volumes'] if ':/docker-entrypoint-initdb.d' in v)
        for script in sorted(os.listdir(initdb_dir)):
            # A container's environment only (env -i): none of the caller's PG* variables.
            sh('runuser', '-u', 'postgres', '--', 'env', '-i', *[f'{k}={v}' for k, v in dbenv.items()],
               f'PGHOST={pgdir}/sock', 'bash', '-s', stdout=subprocess.DEVNULL,
               # on standard input: the postgres user may not reach a checkout in a 0700 folder
               stdin=open(os.path.join(initdb_dir, script), 'rb'))
        ok(healthy(db, me, 30), f"db: initialised by {', '.join(sorted(os.listdir(initdb_dir)))} from the "
           f"secrets, healthy by its healthcheck ({' '.join(db['healthcheck']['test'][1:])})")

        # --- migrate: one shot, then must exit 0 (service_completed_successfully).
        mig, me = services['migrate'], addr['migrate'][0]
        p = cl.spawn('migrate', argv_of(mig, me, ['/usr/bin/bikaroo-mcp']), env=env_of(mig, me))
        ok(p.wait(60) == 0, 'migrate: the one-shot service migrates as the owner role (BIKAROO_MIGRATE_URL_FILE) '
           'and loads the demo data, exit 0' + ('' if p.returncode == 0 else f':\n{cl.tail("migrate")}'))
        p = cl.spawn('migrate-again', argv_of(mig, me, ['/usr/bin/bikaroo-mcp']), env=env_of(mig, me))
        ok(p.wait(60) == 0, 'migrate: a second `docker-compose up` runs it again harmlessly (exit 0)'
           + ('' if p.returncode == 0 else f':\n{cl.tail("migrate-again")}'))

        # --- idp (demo only): the demo-idp image's entrypoint, node tests/auth/as.mjs.
        idp, me = services['idp'], addr['idp'][0]
        argv = ['node', 'tests/auth/as.mjs'] + [a.replace('0.0.0.0', me) for a in as_list(idp.get('command'))]
        argv = [a.replace('/tmp/idp.port', f'{tmp}/idp.port') for a in argv]
        cl.spawn('idp', argv, env=dict(os.environ))
        cl.wait('idp', lambda: os.path.exists(f'{tmp}/idp.port'), 90, 'idp')

        # --- server replicas: the entrypoint (demo forward of the issuer) and command as declared.
        srv = services['server']
        ok('ports' not in srv, 'server: publishes no host port (docker-compose up --scale server=N works)')
        names = []
        for i, me in enumerate(addr['server']):
            names.append(f'server{i + 1}')
            cl.spawn(names[-1], argv_of(srv, me, ['/usr/bin/bikaroo-mcp']), env=env_of(srv, me))
        for name, me in zip(names, addr['server']):
            cl.wait(name, lambda me=me: C.port_open(me, 8080), 30, name)
        # /readyz arrives with the health work of issue 10 item 2; until then say so.
        conn = http.client.HTTPConnection(addr['server'][0], 8080, timeout=5)
        conn.request('GET', '/readyz', headers={'Host': '127.0.0.1'})
        st = conn.getresponse().status
        conn.close()
        if st == 404:
            print('skip - server: healthcheck on /readyz: this build does not serve /readyz yet')
        else:
            ok(all(healthy(srv, me, 30) for me in addr['server']),
               f'server: {len(names)} replicas healthy by their healthcheck (GET /readyz)')

        # --- proxy: the proxy image's nginx with docker/nginx.conf, TLS with the secrets'
        # certificate, on the published host port.
        prx = services['proxy']
        published = prx['ports'][0]
        if isinstance(published, str):  # "HOST_IP:PUBLISHED:TARGET"
            ip, pub, _ = published.split(':')
            published = {'host_ip': ip, 'published': pub}
        ok(published.get('host_ip') == '127.0.0.1' and int(published['published']) == public,
           f'proxy: published on 127.0.0.1:{public} only')
        # Its container port on its own address, the published one on the host side; the
        # upstream stays `server:8080` (the hosts file answers the replicas).
        me = addr['proxy'][0]
        conf = cl.nginx_conf([f'{me}:8080', f'127.0.0.1:{public}'], tls=True)
        cl.nginx(conf, '127.0.0.1', public, name='proxy')
        ok(healthy(prx, me, 10), 'proxy: nginx serves docker/nginx.conf in front of the replicas, '
           'healthy by its healthcheck')

        # --- TLS end to end: the demo CA of docker/make-secrets.sh is what clients trust.
        ca = os.path.join(os.path.dirname(cfg['secrets']['tls_cert']['file']), 'tls_ca')
        tls = ssl.create_default_context(cafile=ca)
        resource = srv['environment']['BIKAROO_RESOURCE_URI']
        ok(resource == f'https://127.0.0.1:{public}/mcp', f'server: its resource URI is https ({resource})')
        base = f'https://127.0.0.1:{public}'
        with urllib.request.urlopen(f'{base}/.well-known/oauth-protected-resource/mcp', context=tls, timeout=10) as r:
            prm, hsts = json.load(r), r.headers.get('Strict-Transport-Security', '')
        ok(prm.get('resource') == resource and hsts.startswith('max-age='),
           f'https: the protected-resource metadata names {prm.get("resource")}; HSTS "{hsts}"')
        st, body = C.call(resource, None, 'tools/list', {}, context=tls)
        ok(st == 401, f'without a token the proxy answers 401 from the server (JWT mode): {st}')
        conn = http.client.HTTPSConnection('127.0.0.1', public, context=tls, timeout=10)
        conn.request('POST', '/mcp', b'{}', {'Content-Type': 'application/json'})
        r = conn.getresponse()
        challenge = r.getheader('WWW-Authenticate') or ''
        r.read()
        conn.close()
        ok(f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"' in challenge,
           f'the 401 challenge names the https metadata: {challenge}')
        conn = http.client.HTTPConnection('127.0.0.1', public, timeout=10)
        conn.request('POST', '/mcp', b'{}', {'Content-Type': 'application/json', 'Host': f'127.0.0.1:{public}'})
        r = conn.getresponse()
        r.read()
        conn.close()
        ok(r.status == 308 and r.getheader('Location') == f'{base}/mcp',
           f'plain HTTP on the public port is redirected to https: {r.status} {r.getheader("Location")}')
        try:
            urllib.request.urlopen(f'{base}/.well-known/oauth-protected-resource/mcp', timeout=10,
                                   context=ssl.create_default_context())
            unverified = 'accepted'
        except urllib.error.URLError as e:
            unverified = str(e.reason)
        ok('CERTIFICATE_VERIFY_FAILED' in unverified,
           f'a client without the demo CA refuses the certificate ({unverified[:80]})')

        # --- a real client through the proxy, verifying its certificate, with a token from the
        # demo identity provider at its published port (the issuer's URL, which each replica's
        # forward also serves).
        token = C.mint(srv['environment']['BIKAROO_AUTH_ISSUER'], 'marie', 'customer-care-assistant', 'fleet:read fleet:report', resource)
        node_env = dict(os.environ, NODE_EXTRA_CA_CERTS=ca)
        r = subprocess.run(['node', os.path.join(C.ROOT, 'tests/compose/client.mjs'), resource, token],
                           capture_output=True, text=True, timeout=90, env=node_env)
        sys.stdout.write(r.stdout)
        ok(r.returncode == 0, f'the official client over https through the proxy (the demo CA trusted), with a '
           f'token from the demo identity provider' + ('' if r.returncode == 0 else f': {r.stderr[-1500:]}'))
        r = subprocess.run(['node', os.path.join(C.ROOT, 'tests/compose/client.mjs'), resource, token],
                           capture_output=True, text=True, timeout=90)
        ok(r.returncode != 0 and 'certificate' in r.stderr.lower(),
           'the same client without the demo CA refuses the connection (the certificate is verified)')
        # Both replicas served (their logs carry the calls they answered).
        served = [n for n in names if 'tools/call' in open(cl.log[n], errors='replace').read()]
        ok(len(served) == len(names), f'the proxy spread the calls over the replicas (served: {", ".join(served)})')
    except Exception as e:
        ok(False, f'compose topology: {e}')
        for name in cl.procs:
            print(f'# --- {name}\n# ' + cl.tail(name, 15).replace('\n', '\n# '))
    finally:
        cl.close()
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(*sys.argv[1:]))
