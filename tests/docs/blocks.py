#!/usr/bin/env python3
"""The docs' command blocks: each one is run here, or marked with what it needs.

blocks.py BIN: prints `ok - ...`, `not ok - ...` and `skip - WHAT: WHY` lines (scripts/test.sh's
suite protocol) for every fenced block of README.md and docs/*.md, run from the repository root.

A block's language says what it is. `sh`, `bash`, `console` and `sql` blocks are commands, and
the line right before each one is a marker (an HTML comment, invisible on the rendered page):

  <!-- docs-test: run -->                  run here (see below); fails when it exits non-zero
  <!-- docs-test: run; expect "TEXT" -->   the same, and its output must contain TEXT
  <!-- docs-test: shown by PATH ... -->    another test runs it; every PATH named must exist
  <!-- docs-test: needs WHAT -->           cannot run on a test machine (a container engine,
                                           systemd as PID 1...): a visible skip line saying WHAT

An unmarked command block, a block without a language, or a marker with no block after it
fails. Other languages (json, ini, text) are data, not commands, and need no marker.

How a `run` block runs: shell blocks with bash -e in a throwaway HOME, against a server started
here as `make run` starts it (BIKAROO_AUTH=local, the demo data) on a free port, which replaces
`127.0.0.1:8080` in the block; `npx` resolves the pinned packages of tests/package.json offline.
SQL blocks run twice as the owner role (psql, ON_ERROR_STOP) on a freshly migrated database,
then once on a database with the demo data: a block that registers something must run on both
and run twice. Every run is bounded in time (60 s).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

COMMANDS = {"sh", "bash", "console", "sql"}
DATA = {"json", "ini", "text", "yaml", "toml", "html", "c", "js", "diff"}
MARK = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->\s*$")
TIMEOUT = 60

bin_path = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.abspath("build/bikaroo-mcp")
root = os.getcwd()
failures = 0


def out(line):
    global failures
    if line.startswith("not ok"):
        failures += 1
    print(line, flush=True)


def blocks(path):
    """(line, language, marker or None, text) of each fenced block of PATH."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, i, pending = [], 0, None
    while i < len(lines):
        m = MARK.match(lines[i].strip())
        if m:
            if pending:
                out("not ok - %s:%d: a docs-test marker with no block after it" % (path, pending[0]))
            pending = (i + 1, m.group(1))
            i += 1
            continue
        fence = re.match(r"^(`{3,})\s*([\w+-]*)", lines[i])
        if fence:
            start, lang, body = i + 1, fence.group(2).lower(), []
            i += 1
            while i < len(lines) and not lines[i].startswith(fence.group(1)):
                body.append(lines[i])
                i += 1
            found.append((start, lang, pending[1] if pending else None, "\n".join(body) + "\n"))
            pending = None
        elif lines[i].strip() and pending and not MARK.match(lines[i].strip()):
            out("not ok - %s:%d: a docs-test marker with no block after it" % (path, pending[0]))
            pending = None
        i += 1
    if pending:
        out("not ok - %s:%d: a docs-test marker with no block after it" % (path, pending[0]))
    return found


def first_line(text):
    line = text.strip().split("\n")[0]
    return line if len(line) <= 60 else line[:57] + "..."


class Setup:
    """The throwaway setup the `run` blocks need, made on first use and removed at the end."""

    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="bikaroo-docs-")
        self.own_cluster = None
        self.server = None
        self.port = None
        self.dbs = []
        self.ready = False
        self.broken = None

    def psql(self, url, *args, **kw):
        return subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", url, *args],
                              capture_output=True, text=True, timeout=TIMEOUT, **kw)

    def url(self, role, db):
        return "postgresql://%s@/%s?%s" % (role, db, os.environ["PGTMP_QUERY"])

    def database(self, name, demo):
        """A new database NAME, migrated, with the demo data when DEMO; its owner's URL."""
        r = self.psql(os.environ["PGTMP_SUPER_URL"], "-c", 'CREATE DATABASE "%s" OWNER fleet_owner' % name)
        if r.returncode:
            raise RuntimeError("create database %s: %s" % (name, r.stderr.strip()))
        self.dbs.append(name)
        owner = self.url("fleet_owner", name)
        r = subprocess.run([bin_path, "migrate"],
                           env=dict(os.environ, DATABASE_URL=owner, BIKAROO_MIGRATE_URL=owner),
                           capture_output=True, text=True, timeout=TIMEOUT)
        if r.returncode:
            raise RuntimeError("migrate %s: %s" % (name, r.stderr.strip()[-400:]))
        if demo:
            r = self.psql(owner, "-f", "migrations/demo/demo-data.sql")
            if r.returncode:
                raise RuntimeError("demo data in %s: %s" % (name, r.stderr.strip()))
        return owner

    def start(self):
        if self.broken:
            raise RuntimeError(self.broken)
        if self.ready:
            return
        try:
            self.make()
        except (RuntimeError, subprocess.SubprocessError, OSError) as e:
            self.broken = "the setup failed: %s" % e
            raise

    def make(self):
        if "PGTMP_SUPER_URL" not in os.environ:  # run alone: a cluster of our own
            self.own_cluster = os.path.join(self.tmp, "pg")
            env = subprocess.run(["scripts/pgtmp.sh", "start", self.own_cluster], check=True,
                                 capture_output=True, text=True, timeout=120).stdout
            for k, v in re.findall(r"^(\w+)='(.*)'$", env, re.M):
                os.environ[k] = v
        tag = "%d_%d" % (os.getpid(), int(time.time()))
        self.fresh = self.database("docs_fresh_" + tag, False)
        self.demo = self.database("docs_demo_" + tag, True)
        # The server as `make run` serves it, on a free port.
        ready = os.path.join(self.tmp, "port")
        env = dict(os.environ, BIKAROO_AUTH="local", BIKAROO_PORT="0",
                   BIKAROO_METRICS_LISTEN="127.0.0.1:0", BIKAROO_READY_FILE=ready,
                   DATABASE_URL=self.url("fleet_app", "docs_demo_" + tag))
        env.pop("BIKAROO_MIGRATE_URL", None)
        self.log = open(os.path.join(self.tmp, "server.log"), "w")
        self.server = subprocess.Popen([bin_path, "serve"], env=env, stdout=self.log, stderr=self.log)
        for _ in range(100):
            if os.path.exists(ready) and open(ready).read().strip():
                break
            if self.server.poll() is not None:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("the server did not start")
        if self.server.poll() is not None:
            raise RuntimeError("the server exited: " + open(self.log.name).read()[-400:])
        self.port = open(ready).read().strip()
        # npx finds the pinned packages (tests/package.json) where tests/e2e/install.sh put
        # them, without the network.
        shim = os.path.join(self.tmp, "bin")
        os.makedirs(shim)
        with open(os.path.join(shim, "npx"), "w") as f:
            f.write('#!/bin/sh\ncd "%s/tests" && npm_config_offline=true exec %s "$@"\n'
                    % (root, shutil.which("npx") or "/usr/bin/npx"))
        os.chmod(os.path.join(shim, "npx"), 0o755)
        self.path = shim + os.pathsep + os.environ["PATH"]
        self.ready = True

    def run_sh(self, text):
        home = tempfile.mkdtemp(dir=self.tmp)
        text = text.replace("127.0.0.1:8080", "127.0.0.1:" + self.port)
        env = dict(os.environ, HOME=home, PATH=self.path)
        return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], env=env, cwd=root,
                              capture_output=True, text=True, timeout=TIMEOUT)

    def run_sql(self, text):
        for url in (self.fresh, self.fresh, self.demo):
            r = self.psql(url, input=text)
            if r.returncode:
                return r
        return r

    def stop(self):
        if self.server:
            self.server.terminate()
            try:
                self.server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.server.kill()
        for name in self.dbs:
            self.psql(os.environ["PGTMP_SUPER_URL"], "-c", 'DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)
        if self.own_cluster:
            subprocess.run(["scripts/pgtmp.sh", "destroy", self.own_cluster], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)


docs = ["README.md"] + sorted("docs/" + f for f in os.listdir("docs") if f.endswith(".md"))
setup = Setup()
counts = {"run": 0, "shown": 0, "needs": 0, "data": 0}
try:
    for path in docs:
        for line, lang, marker, text in blocks(path):
            where = "%s:%d (%s)" % (path, line, first_line(text))
            if not lang:
                out("not ok - %s: a block without a language (sh, sql, json, text...)" % where)
                continue
            if lang not in COMMANDS:
                if lang not in DATA:
                    out("not ok - %s: unknown block language %r" % (where, lang))
                elif marker:
                    out("not ok - %s: a docs-test marker on a %s block, which is data" % (where, lang))
                counts["data"] += 1
                continue
            if not marker:
                out("not ok - %s: a command block neither run by a test nor marked with what it "
                    "needs (<!-- docs-test: run | shown by PATH | needs WHAT -->)" % where)
                continue
            m = re.fullmatch(r'run(?:;\s*expect\s+"(.*)")?', marker)
            if m:
                counts["run"] += 1
                try:
                    setup.start()
                    r = setup.run_sql(text) if lang == "sql" else setup.run_sh(text)
                except (RuntimeError, subprocess.SubprocessError, OSError) as e:
                    out("not ok - %s runs: %s" % (where, e))
                    continue
                said = r.stdout + r.stderr
                if r.returncode:
                    out("not ok - %s runs: exit %d" % (where, r.returncode))
                    print("\n".join("#   " + x for x in said.strip().split("\n")[-15:]))
                elif m.group(1) and m.group(1) not in said:
                    out('not ok - %s runs and says "%s"' % (where, m.group(1)))
                    print("\n".join("#   " + x for x in said.strip().split("\n")[-15:]))
                else:
                    out("ok - %s runs%s" % (where, ' and says "%s"' % m.group(1) if m.group(1) else ""))
                continue
            if marker.startswith("shown by "):
                counts["shown"] += 1
                named = [w.strip("(),;") for w in marker[len("shown by "):].split()]
                named = [w for w in named if "/" in w or w.startswith(".")]
                missing = [w for w in named if not os.path.exists(w)]
                if not named or missing:
                    out("not ok - %s: shown by %s, which does not exist"
                        % (where, ", ".join(missing) or "no test named"))
                else:
                    out("ok - %s is shown by %s" % (where, ", ".join(named)))
                continue
            if marker.startswith("needs "):
                counts["needs"] += 1
                out("skip - %s: %s" % (where, marker))
                continue
            out("not ok - %s: unknown docs-test marker %r" % (where, marker))
finally:
    setup.stop()
print("# docs blocks: %d run, %d shown by another test, %d marked as needing what a test machine "
      "lacks, %d data blocks" % (counts["run"], counts["shown"], counts["needs"], counts["data"]))
sys.exit(1 if failures else 0)
