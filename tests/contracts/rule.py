#!/usr/bin/env python3
"""tests/contracts/rule.py: self-tests of the output rule of scripts/contracts.py, on the cases
of tests/contracts/rule-cases.json. For each case: the level the checker gives the change is
the case's; its answers carry only what their schema declares (what the rule assumes of the
server); and the official client's own validator (crossing.mjs, from tests/node_modules)
refuses an answer of one version against the other version's schema exactly when the level is
major. Prints "ok - " / "not ok - " / "skip - " lines; exits 1 on a "not ok".
    python3 tests/contracts/rule.py"""
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(HERE, 'rule-cases.json')
spec = importlib.util.spec_from_file_location('contracts', os.path.join(ROOT, 'scripts', 'contracts.py'))
C = importlib.util.module_from_spec(spec)
spec.loader.exec_module(C)
LEVELS = {'none': C.NONE, 'patch': C.PATCH, 'minor': C.MINOR, 'major': C.MAJOR}
failed = 0


def report(good, what):
    global failed
    print(('ok - ' if good else 'not ok - ') + what)
    failed += not good


def undeclared(schema, answer, path=''):
    """Properties of answer its schema does not declare, at any depth of objects."""
    if not isinstance(schema, dict) or not isinstance(answer, dict):
        return []
    props = schema.get('properties') or {}
    out = []
    for k, v in answer.items():
        sub = f'{path}.{k}' if path else k
        out += [sub] if k not in props else undeclared(props[k], v, sub)
    return out


def main():
    with open(CASES, encoding='utf-8') as f:
        cases = json.load(f)['cases']
    for c in cases:
        changes = C.diff_schema(c['old'], c['new'], '', False, 'outputSchema')
        level = max([ch.level for ch in changes], default=C.NONE)
        got = [k for k, v in LEVELS.items() if v == level][0]
        report(got == c['level'], f'{c["name"]}: {c["level"]}' + (
            '' if got == c['level'] else f', the checker says {got}: {"; ".join(ch.reason for ch in changes)}'))
        extra = [f'{v} {a}: {u}' for v in ('old', 'new') for a in c['answers'][v]
                 for u in undeclared(c[v], a)]
        if extra:
            report(False, f'{c["name"]}: answers carry only what their schema declares: {extra}')
    closed = [c['name'] for c in cases if C.closed_outputs(c['new'])]
    report(closed == [c['name'] for c in cases if c['new'].get('additionalProperties') is False],
           f'the check refuses every closed output of the cases ({len(closed)})')

    node = os.environ.get('E2E_NODE', 'node')
    client = os.path.join(ROOT, 'tests', 'node_modules', '@modelcontextprotocol', 'client')
    if not os.path.isdir(client):
        print('skip - the official client\'s validator on the cases: tests/node_modules is not installed '
              '(tests/e2e/install.sh)')
        return 1 if failed else 0
    r = subprocess.run([node, os.path.join(HERE, 'crossing.mjs'), CASES], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0:
        report(False, f'crossing.mjs runs: {r.stderr[-600:]}')
        return 1
    seen = {}
    for line in r.stdout.splitlines():
        o = json.loads(line)
        seen[o['name']] = o
    for c in cases:
        o = seen.get(c['name'])
        if o is None:
            report(False, f'{c["name"]}: no answer from crossing.mjs')
            continue
        if o['own']:
            report(False, f'{c["name"]}: each answer is valid against its own schema: {o["own"]}')
        major = c['level'] == 'major'
        report(bool(o['crossed']) == major,
               f'{c["name"]}: the official client\'s validator ' + (
                   f'refuses an answer across versions ({o["crossed"][0]})' if o['crossed'] else
                   'accepts every answer of either version against either schema') + (
                   '' if bool(o['crossed']) == major else f', yet the case says {c["level"]}'))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
