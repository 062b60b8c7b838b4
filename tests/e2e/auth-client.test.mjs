// E2E: the official clients (v2 modern and auto, v1 legacy) with real bearer tokens against the
// server in BIKAROO_AUTH=jwt mode, next to the test authorization server (tests/auth/as.mjs).
// Starts both itself on 127.0.0.1 (BIKAROO_BIN and DATABASE_URL from scripts/test.sh) and stops
// them by PID.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BIKAROO_BIN;
const RESOURCE = 'https://mcp.bikaroo.test/mcp';
const T = { timeout: 20_000 };
const REQ = { timeout: 10_000 };

// Keeps the last few KiB a child wrote on stderr, for the error message if it does not start.
function stderrTail(child) {
  let tail = '';
  child.stderr?.on('data', (chunk) => { tail = (tail + chunk).slice(-4096); });
  return () => tail;
}

// Both start in about a second; a loaded machine may take far longer, and tests/auth/as.mjs
// tries a stalled start of its provider again (up to three tries of 30 s): wait 2400 polls of
// 50 ms (two minutes or more, inside the 150 s of the hook).
async function waitForFile(file, child, what, tail) {
  // Polls counted, not clock readings: a paused machine's clock jump must not end the wait.
  for (let i = 0; i < 2400; i++) {
    if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim()) return fs.readFileSync(file, 'utf8').trim();
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${tail()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not start within 2400 polls (two minutes or more): ${tail()}`);
}

function stop(child) {
  return new Promise((resolve) => {
    if (!child || child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    process.kill(child.pid, 'SIGTERM');
  });
}

describe('official clients with bearer tokens (BIKAROO_AUTH=jwt)', { timeout: 3 * 60_000, skip: !BIN && 'BIKAROO_BIN not set' }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bikaroo-e2e-auth-'));
  let as;
  let server;
  let asPort;
  let url;

  const mint = async (sub, client, scope) => {
    const q = new URLSearchParams({ sub, client, scope, resource: RESOURCE });
    const r = await fetch(`http://127.0.0.1:${asPort}/mint?${q}`);
    const j = await r.json();
    assert.ok(j.access_token, JSON.stringify(j));
    return j.access_token;
  };

  before(async () => {
    // Its log goes where scripts/test.sh looks for starts that as.mjs had to try again.
    const asLog = path.join(process.env.IT_TMP ?? tmp, 'as-e2e.log');
    const fd = fs.openSync(asLog, 'w');
    as = spawn(process.execPath, [path.join(here, '../auth/as.mjs'), '--ready', path.join(tmp, 'as.port'), '--resource', RESOURCE],
      { stdio: ['ignore', 'ignore', fd] });
    fs.closeSync(fd);
    asPort = await waitForFile(path.join(tmp, 'as.port'), as, 'the authorization server',
      () => fs.readFileSync(asLog, 'utf8').slice(-4096));
    server = spawn(BIN, ['serve'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env, BIKAROO_AUTH: 'jwt', BIKAROO_AUTH_ISSUER: `http://127.0.0.1:${asPort}`, BIKAROO_RESOURCE_URI: RESOURCE,
        BIKAROO_AUTH_INSECURE_LOOPBACK: '1', BIKAROO_PORT: '0', BIKAROO_LISTEN: '127.0.0.1', BIKAROO_READY_FILE: path.join(tmp, 'srv.port'),
      },
    });
    url = new URL(`http://127.0.0.1:${await waitForFile(path.join(tmp, 'srv.port'), server, 'the server', stderrTail(server))}/mcp`);
  }, { timeout: 150_000 });

  after(async () => {
    await stop(server);
    await stop(as);
    fs.rmSync(tmp, { recursive: true, force: true });
  }, T);

  for (const mode of [{ pin: '2026-07-28' }, 'auto']) {
    test(`v2 client (${JSON.stringify(mode)}) acts as the token's user and sees only her tools`, T, async () => {
      const token = await mint('marie', 'customer-care-assistant', 'fleet:read');
      const client = new ClientV2({ name: 'e2e-auth', version: '1' }, { versionNegotiation: { mode } });
      await client.connect(new TransportV2(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), REQ);
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        const tools = await client.listTools(undefined, REQ);
        // A read-only token lists read-only tools only (whatever the catalogue holds), this one
        // among them.
        assert.ok(tools.tools.some((t) => t.name === 'get_bike_status'));
        for (const t of tools.tools) assert.equal(t.annotations.readOnlyHint, true, `${t.name} listed to a read-only token`);
        const own = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: 'VL-2048' } }, REQ);
        assert.equal(own.isError, false);
        assert.equal(own.structuredContent.region, 'FR-PAR');
        const other = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: 'VL-2047' } }, REQ);
        assert.equal(other.isError, true, 'a FR-LYO bike must read as not found for marie');
      } finally {
        await client.close();
      }
    });
  }

  test('v1 (legacy, initialize) client with a token for paul reads his region', T, async () => {
    const token = await mint('paul', 'customer-care-assistant', 'fleet:read');
    const client = new ClientV1({ name: 'e2e-auth-v1', version: '1' });
    await client.connect(new TransportV1(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }), REQ);
    try {
      const r = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: 'VL-2047' } }, undefined, REQ);
      assert.equal(r.isError, false);
      assert.equal(r.structuredContent.region, 'FR-LYO');
    } finally {
      await client.close();
    }
  });

  test('without a token the client is told authorization is required', T, async () => {
    const client = new ClientV2({ name: 'e2e-no-token', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await assert.rejects(client.connect(new TransportV2(url), REQ), /401|authoriz/i);
    const prm = await (await fetch(new URL('/.well-known/oauth-protected-resource/mcp', url))).json();
    assert.equal(prm.resource, RESOURCE);
    assert.deepEqual(prm.authorization_servers, [`http://127.0.0.1:${asPort}`]);
  });
});
