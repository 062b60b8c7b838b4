// Starts `bikaroo-mcp serve` (BIKAROO_BIN, under BIKAROO_WRAPPER when set) acting as subject
// through client, on a free port of 127.0.0.1, for the e2e tests that need a caller of their own
// (a declaration's example caller: server/capabilities/NAME.json). Resolves { url, stop, log }.
// Also what the tests that start their own processes share: waiting for a ready file, stopping
// a child, the error a call rejects with.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const tmp = mkdtempSync(join(tmpdir(), 'bikaroo-e2e-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
let seq = 0;

export const slow = Boolean(process.env.BIKAROO_WRAPPER); // valgrind

export async function startServer(subject, client, extraEnv = {}) {
  const bin = process.env.BIKAROO_BIN;
  if (!bin) throw new Error('BIKAROO_BIN is not set (the server binary; scripts/test.sh sets it)');
  const ready = join(tmp, `ready-${++seq}`);
  const wrapper = (process.env.BIKAROO_WRAPPER ?? '').split(' ').filter(Boolean);
  const argv = [...wrapper, bin, 'serve'];
  const child = spawn(argv[0], argv.slice(1), {
    env: {
      ...process.env,
      BIKAROO_PORT: '0',
      BIKAROO_LISTEN: '127.0.0.1',
      BIKAROO_READY_FILE: ready,
      BIKAROO_LOCAL_SUBJECT: subject,
      BIKAROO_LOCAL_CLIENT: client,
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => { log = (log + d).slice(-4000); });
  // Polls counted, not clock readings: a paused machine's clock jump must not end the wait.
  for (let polls = slow ? 2400 : 400; polls > 0; polls--) {
    if (existsSync(ready)) {
      const port = readFileSync(ready, 'utf8').trim();
      if (port) {
        const stop = () => new Promise((resolve) => {
          if (child.exitCode !== null) return resolve(child.exitCode);
          child.once('exit', (code) => resolve(code));
          child.kill('SIGTERM');
        });
        return { url: `http://127.0.0.1:${port}/mcp`, stop, log: () => log };
      }
    }
    if (child.exitCode !== null) throw new Error(`server exited: ${log}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${log}`);
}

// Runs an example's fixture (the rows it needs) as the database owner (IT_SUPER_URL, which
// scripts/test.sh sets); where names the example in the failure.
export function runFixture(example, where) {
  if (!example.fixture) return;
  const url = process.env.IT_SUPER_URL;
  if (!url) throw new Error('IT_SUPER_URL is not set (the database owner; scripts/test.sh sets it)');
  try {
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url, '-c', example.fixture], { encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    throw new Error(`${where}.example.fixture: the SQL failed (${String(err.stderr).trim()}): make it run as the database owner`);
  }
}

// The example of the tool named name, in whichever declaration holds it
// (server/capabilities/*.json): { arguments, caller, ... }.
export function declaredExample(name) {
  const dir = new URL('../../server/capabilities/', import.meta.url);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const tool = (JSON.parse(readFileSync(new URL(file, dir), 'utf8')).tools ?? []).find((t) => t.name === name);
    if (tool) return tool.example;
  }
  throw new Error(`no declaration has a tool ${name}`);
}

// The content of file once a process (child) has written it; throws when child exits first.
// Both the server and the authorization server start in about a second; a loaded machine may
// take far longer (see auth-client.test.mjs).
export async function waitForFile(file, child, what, tail) {
  // Polls counted, not clock readings: a paused machine's clock jump must not end the wait.
  for (let i = 0; i < 2400; i++) {
    if (existsSync(file) && readFileSync(file, 'utf8').trim()) return readFileSync(file, 'utf8').trim();
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start within 2400 polls: ${tail()}`);
}

// SIGTERM to child; resolves its exit code.
export function stop(child) {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null) return resolve(child?.exitCode);
    child.once('exit', (code) => resolve(code));
    process.kill(child.pid, 'SIGTERM');
  });
}

// The error a promise rejects with (fails when it resolves).
export async function rejection(promise) {
  try {
    const value = await promise;
    assert.fail(`expected an error, got ${JSON.stringify(value)}`);
  } catch (err) {
    if (err?.code === 'ERR_ASSERTION') throw err;
    return err;
  }
}
