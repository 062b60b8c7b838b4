"""Issue 20 item 2: the requestState key ring across instances. One database, instances with
BIKAROO_AUTH=local acting as marie through careful-assistant (a client application whose reports
need a server-side confirmation), each with its own place in a rotation from K1 to K2:
  before   BIKAROO_STATE_SECRET=K1
  step 1   K1, with K2 announced in BIKAROO_STATE_SECRET_PREVIOUS (accepted, not sealing)
  step 2   K2, with K1 in BIKAROO_STATE_SECRET_PREVIOUS
  step 3   K2 alone (K1 removed)
A confirmation begun on one instance is completed on another.   python3 rotation.py TMPDIR"""
import json
import os
import secrets
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'cluster'))
import cluster as C  # noqa: E402

ok = C.Tap()
CAPS = {'elicitation': {'form': {}}}
ACCEPT = {'confirm': {'action': 'accept', 'content': {'confirm': True}}}


def begin(port, bike):
    args = {'name': 'report_damaged_bike', 'arguments': {'bikeId': bike, 'issue': 'brake_failure'}}
    st, body = C.call(f'http://127.0.0.1:{port}/mcp', None, 'tools/call', args,
                      name='report_damaged_bike', caps=CAPS)
    r = (body or {}).get('result') or {}
    if st != 200 or r.get('resultType') != 'input_required' or not r.get('requestState'):
        raise RuntimeError(f'no confirmation asked on port {port}: {st} {json.dumps(body)[:300]}')
    return args, r['requestState']


def complete(port, args, state):
    accept = dict(args, inputResponses=ACCEPT, requestState=state)
    return C.call(f'http://127.0.0.1:{port}/mcp', None, 'tools/call', accept,
                  name='report_damaged_bike', caps=CAPS)


def reports(url, bike):
    return C.sql(url, f"SELECT report_id FROM fleet.damage_reports WHERE bike_id = '{bike}' ORDER BY 1")


def main(tmp):
    db = f'rotation_it_{os.getpid()}'
    app_url, owner_url = C.fresh_database(db)
    cl = C.Cluster(tmp)
    k1, k2 = secrets.token_hex(24), secrets.token_hex(24)
    base = dict(os.environ, DATABASE_URL=app_url, BIKAROO_AUTH='local', BIKAROO_LOCAL_SUBJECT='marie',
                BIKAROO_LOCAL_CLIENT='careful-assistant', BIKAROO_LOG_LEVEL='info')
    base.pop('BIKAROO_MIGRATE_URL', None)
    base.pop('BIKAROO_STATE_SECRET_PREVIOUS', None)

    def instance(name, current, previous=None):
        env = dict(base, BIKAROO_STATE_SECRET=current)
        if previous:
            env['BIKAROO_STATE_SECRET_PREVIOUS'] = previous
        return cl.instance(name, env)

    try:
        before = instance('before', k1)
        step1 = instance('step1', k1, k2)
        step2 = instance('step2', k2, k1)
        step3 = instance('step3', k2)
        log = open(cl.log['step2']).read()
        ids = [line for line in log.splitlines() if 'requestState: sealed with key' in line]
        ok(len(ids) == 1 and 'also accepted' in ids[0],
           f'an instance logs the id of the key it seals with and of those it accepts: {ids[:1]}')

        # A confirmation begun before the rotation completes after it, on another instance.
        args, state = begin(before, 'VL-2048')
        st, body = complete(step2, args, state)
        rid = ((body or {}).get('result') or {}).get('structuredContent', {}).get('reportId')
        ok(st == 200 and rid and reports(owner_url, 'VL-2048') == [[rid]],
           f'begun with K1 (before the rotation), completed with K2 current and K1 previous: {rid} '
           + ('' if rid else f'{st} {json.dumps(body)[:300]}'))

        # Sealed at step 2 (K2), completed on an instance still at step 1 (K2 only announced).
        args, state = begin(step2, 'VL-2051')
        st, body = complete(step1, args, state)
        rid = ((body or {}).get('result') or {}).get('structuredContent', {}).get('reportId')
        ok(st == 200 and rid and reports(owner_url, 'VL-2051') == [[rid]],
           f'begun with K2 current, completed on an instance one step behind (K1 current, K2 '
           f'announced): {rid} ' + ('' if rid else f'{st} {json.dumps(body)[:300]}'))

        # Sealed with K1, opened once K1 was removed: refused, clearly, and nothing written.
        keys_before = C.sql(owner_url, 'SELECT count(*) FROM fleet.idempotent_calls')
        all_before = C.sql(owner_url, 'SELECT count(*) FROM fleet.damage_reports')
        args, state = begin(before, 'VL-2054')
        st, body = complete(step3, args, state)
        err = (body or {}).get('error') or {}
        ok(err.get('code') == -32602 and 'key this server does not accept' in (err.get('message') or '')
           and 'rotated out' in err.get('message', ''),
           f'sealed with a removed key: -32602 saying so: {st} {json.dumps(err)[:300]}')
        ok(reports(owner_url, 'VL-2054') == []
           and C.sql(owner_url, 'SELECT count(*) FROM fleet.damage_reports') == all_before
           and C.sql(owner_url, 'SELECT count(*) FROM fleet.idempotent_calls') == keys_before,
           'nothing written for it: no report, no idempotency record')
        # The same state still completes where K1 is accepted: the refusal was the key's alone.
        st, body = complete(step2, args, state)
        rid = ((body or {}).get('result') or {}).get('structuredContent', {}).get('reportId')
        ok(st == 200 and rid, f'the same state completes on an instance that still accepts K1: {rid}')

        # A state of another deployment (a key never in the ring) reads the same way.
        forged = secrets.token_hex(24)
        other = instance('other', forged)
        args, state = begin(other, 'VL-2057')
        st, body = complete(step3, args, state)
        ok(((body or {}).get('error') or {}).get('code') == -32602 and reports(owner_url, 'VL-2057') == [],
           'a state sealed by another deployment is refused, nothing written')

        # Settings refused at start, naming the setting.
        for prev, what in (('short', 'a previous secret shorter than 32 characters'),
                           ('\n'.join(secrets.token_hex(24) for _ in range(5)), 'more than 4 previous secrets')):
            env = dict(base, BIKAROO_STATE_SECRET=k1, BIKAROO_STATE_SECRET_PREVIOUS=prev, BIKAROO_PORT='0')
            r = subprocess.run([os.environ['BIKAROO_BIN'], 'serve'], env=env, capture_output=True, text=True,
                               timeout=30)
            ok(r.returncode == 1 and 'BIKAROO_STATE_SECRET_PREVIOUS' in r.stderr,
               f'{what} stops the start naming BIKAROO_STATE_SECRET_PREVIOUS (exit {r.returncode})')
    except Exception as e:
        ok(False, f'rotation harness: {e}')
        cl.print_tails()
    finally:
        cl.close()
        C.drop_database(db)
    return 1 if ok.failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
