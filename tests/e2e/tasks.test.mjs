// E2E: the Tasks extension (io.modelcontextprotocol/tasks) over the case workflow with the official
// v2 client (@modelcontextprotocol/client) at 2026-07-28 and real bearer tokens (BIKAROO_AUTH=jwt,
// the test authorization server tests/auth/as.mjs), three instances of the server on one database:
// marie asks for an inspection as a task on the first, tom records the finding on the second,
// marie's tasks/get on the third answers completed with the call's result; paul cannot tell her
// task from an unknown one; a client that does not declare the extension never gets a task; a
// write-off is refused to the operator who asked and approved by another.
//
// The client 2.4.0 rejects a result whose resultType is "task" (UnsupportedResultType) and has no
// typed tasks helper: the CreateTaskResult is read from the transport's answer (its fetch option),
// and tasks/get goes through the generic request() with a result schema.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { rejection, slow, stop, waitForFile } from './serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BIKAROO_BIN;
const RESOURCE = 'https://mcp.bikaroo.test/mcp';
const TASKS = 'io.modelcontextprotocol/tasks';
const T = { timeout: slow ? 120_000 : 30_000 };
const REQ = { timeout: slow ? 30_000 : 10_000 };
// FR-PAR bikes available in the demo data, used by no other e2e test.
const BIKE_TASK = 'VL-3113';
const BIKE_PLAIN = 'VL-3116';
const BIKE_WRITE_OFF = 'VL-3119';

// A result schema for request() (Standard Schema v1): any object, as the server sent it.
const anyObject = {
  '~standard': {
    version: 1,
    vendor: 'bikaroo-e2e',
    validate: (value) => (value && typeof value === 'object' && !Array.isArray(value)
      ? { value }
      : { issues: [{ message: 'not an object' }] }),
  },
};

// The JSON-RPC messages of an HTTP answer (application/json or an SSE stream).
function messagesOf(contentType, text) {
  if (!contentType?.includes('text/event-stream')) return [JSON.parse(text)];
  return text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
}

describe('Tasks extension over the case workflow, v2 client, bearer tokens, three instances', { timeout: 6 * 60_000, skip: !BIN && 'BIKAROO_BIN not set' }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bikaroo-e2e-tasks-'));
  let as;
  let asPort;
  const servers = [];
  const urls = [];

  const mint = async (sub, client) => {
    const q = new URLSearchParams({ sub, client, scope: 'fleet:read fleet:report', resource: RESOURCE });
    const j = await (await fetch(`http://127.0.0.1:${asPort}/mint?${q}`)).json();
    assert.ok(j.access_token, JSON.stringify(j));
    return j.access_token;
  };

  // A v2 client of the instance i as sub through client app. tasks: declare the extension in
  // each request's clientCapabilities. The answers to its tools/call requests land in raw.
  async function connect(i, sub, app, { tasks = false, raw = [] } = {}) {
    const token = await mint(sub, app);
    const client = new Client({ name: 'bikaroo-e2e-tasks', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: 10_000 } },
      capabilities: { elicitation: { form: {} }, ...(tasks && { extensions: { [TASKS]: {} } }) },
    });
    // The write-off's confirmation on the server's side: the user accepts.
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
    const recording = async (input, init) => {
      const res = await fetch(input, init);
      const sent = typeof init?.body === 'string' ? JSON.parse(init.body) : null;
      if (sent?.method === 'tools/call') {
        for (const m of messagesOf(res.headers.get('content-type'), await res.clone().text())) {
          if (m.id === sent.id) raw.push({ request: sent, message: m });
        }
      }
      return res;
    };
    const transport = new StreamableHTTPClientTransport(new URL(urls[i]), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: recording,
    });
    await client.connect(transport, REQ);
    return client;
  }

  const taskGet = (client, taskId) => client.request({ method: 'tasks/get', params: { taskId } }, anyObject, REQ);


  // marie reports bike damaged (ordinary call): its case id.
  async function report(client, bikeId) {
    const r = await client.callTool({ name: 'report_damaged_bike', arguments: { bikeId, issue: 'brake_failure' } }, REQ);
    assert.equal(r.isError, false, JSON.stringify(r));
    return r.structuredContent.caseId;
  }

  before(async () => {
    const asLog = path.join(process.env.IT_TMP ?? tmp, 'as-e2e-tasks.log');
    const fd = fs.openSync(asLog, 'w');
    as = spawn(process.execPath, [path.join(here, '../auth/as.mjs'), '--ready', path.join(tmp, 'as.port'), '--resource', RESOURCE],
      { stdio: ['ignore', 'ignore', fd] });
    fs.closeSync(fd);
    asPort = await waitForFile(path.join(tmp, 'as.port'), as, 'the authorization server',
      () => fs.readFileSync(asLog, 'utf8').slice(-4096));
    for (let i = 0; i < 3; i++) {
      const ready = path.join(tmp, `srv-${i}.port`);
      const wrapper = (process.env.BIKAROO_WRAPPER ?? '').split(' ').filter(Boolean);
      const argv = [...wrapper, BIN, 'serve'];
      const child = spawn(argv[0], argv.slice(1), {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: {
          ...process.env, BIKAROO_AUTH: 'jwt', BIKAROO_AUTH_ISSUER: `http://127.0.0.1:${asPort}`, BIKAROO_RESOURCE_URI: RESOURCE,
          BIKAROO_AUTH_INSECURE_LOOPBACK: '1', BIKAROO_PORT: '0', BIKAROO_LISTEN: '127.0.0.1', BIKAROO_READY_FILE: ready,
        },
      });
      let tail = '';
      child.stderr.on('data', (d) => { tail = (tail + d).slice(-4096); });
      servers.push(child);
      urls.push(`http://127.0.0.1:${await waitForFile(ready, child, `server ${i}`, () => tail)}/mcp`);
    }
  }, { timeout: 150_000 });

  after(async () => {
    for (const s of servers) assert.equal(await stop(s), 0, 'a server did not stop cleanly');
    await stop(as);
    fs.rmSync(tmp, { recursive: true, force: true });
  }, T);

  test('an inspection asked as a task, recorded on another instance, seen completed on a third', T, async () => {
    const raw = [];
    const marie1 = await connect(0, 'marie', 'customer-care-assistant', { tasks: true, raw });
    const tom2 = await connect(1, 'tom', 'ops-assistant');
    const marie3 = await connect(2, 'marie', 'customer-care-assistant', { tasks: true });
    const paul3 = await connect(2, 'paul', 'customer-care-assistant', { tasks: true });
    try {
      const caseId = await report(marie1, BIKE_TASK);
      // The SDK does not take a task for an answer; the wire shows the CreateTaskResult.
      const err = await rejection(marie1.callTool({ name: 'request_inspection', arguments: { caseId, note: 'brakes squeal' } }, REQ));
      assert.equal(err.data?.resultType, 'task', String(err));
      const created = raw.find((x) => x.request.params.name === 'request_inspection')?.message.result;
      assert.ok(created, JSON.stringify(raw));
      assert.equal(created.resultType, 'task');
      assert.equal(created.status, 'working');
      assert.match(created.taskId, /^[A-Za-z0-9_-]{32,}$/);
      assert.ok(Number.isInteger(created.ttlMs) && created.ttlMs > 0, JSON.stringify(created));
      assert.ok(Number.isInteger(created.pollIntervalMs) && created.pollIntervalMs > 0, JSON.stringify(created));
      assert.ok(!Number.isNaN(Date.parse(created.createdAt)));
      assert.equal(created.content, undefined, 'a task, not a tool result');
      // The request carried the declaration in its envelope.
      const sentCaps = raw[raw.length - 1].request.params._meta['io.modelcontextprotocol/clientCapabilities'];
      assert.deepEqual(sentCaps.extensions?.[TASKS], {});

      const working = await taskGet(marie3, created.taskId);
      assert.equal(working.taskId, created.taskId);
      assert.equal(working.status, 'working');
      assert.match(working.statusMessage, /technician/);

      // Another subject: exactly the answer to an id never issued.
      const stolen = await rejection(taskGet(paul3, created.taskId));
      const unknown = await rejection(taskGet(paul3, '00000000-0000-4000-8000-000000000000'));
      assert.equal(stolen.code, -32602, String(stolen));
      assert.equal(stolen.code, unknown.code);
      assert.equal(stolen.message, unknown.message);
      assert.deepEqual(stolen.data, unknown.data);

      const recorded = await tom2.callTool({ name: 'record_inspection', arguments: { caseId, finding: 'repairable', note: 'pads worn' } }, REQ);
      assert.equal(recorded.isError, false, JSON.stringify(recorded));

      const done = await taskGet(marie3, created.taskId);
      assert.equal(done.status, 'completed', JSON.stringify(done));
      assert.equal(done.result.isError, false);
      assert.equal(done.result.structuredContent.caseId, caseId);
      assert.equal(done.result.structuredContent.state, 'inspected');
      assert.equal(done.result.structuredContent.finding, 'repairable');
      assert.ok(done.result.content.length > 0);
      // Still nothing for paul once it is completed.
      assert.equal((await rejection(taskGet(paul3, created.taskId))).code, -32602);
    } finally {
      for (const c of [marie1, tom2, marie3, paul3]) await c.close();
    }
  });

  test('a client that does not declare the extension gets the ordinary result, never a task', T, async () => {
    const raw = [];
    const marie = await connect(1, 'marie', 'customer-care-assistant', { raw });
    try {
      const caseId = await report(marie, BIKE_PLAIN);
      const r = await marie.callTool({ name: 'request_inspection', arguments: { caseId } }, REQ);
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.equal(r.structuredContent.caseId, caseId);
      assert.equal(r.structuredContent.state, 'inspection_requested');
      const wire = raw.find((x) => x.request.params.name === 'request_inspection').message.result;
      assert.equal(wire.resultType, 'complete');
      assert.equal(wire.taskId, undefined);
      // Task methods are not for it either.
      const err = await rejection(taskGet(marie, '00000000-0000-4000-8000-000000000000'));
      assert.equal(err.code, -32021, String(err));
    } finally {
      await marie.close();
    }
  });

  test('a write-off is refused to the operator who asked and approved by another', T, async () => {
    const marie = await connect(0, 'marie', 'customer-care-assistant');
    const olivia = await connect(0, 'olivia', 'ops-assistant');
    const tom = await connect(1, 'tom', 'ops-assistant');
    const nadia = await connect(2, 'nadia', 'ops-assistant');
    try {
      const caseId = await report(marie, BIKE_WRITE_OFF);
      const step = async (client, name, args) => {
        const r = await client.callTool({ name, arguments: { caseId, ...args } }, REQ);
        assert.equal(r.isError, false, `${name}: ${JSON.stringify(r)}`);
        return r.structuredContent;
      };
      await step(olivia, 'request_inspection', {});
      await step(tom, 'record_inspection', { finding: 'beyond_repair' });
      assert.equal((await step(olivia, 'close_case', { resolution: 'written_off', note: 'frame cracked' })).state, 'awaiting_approval');
      const own = await olivia.callTool({ name: 'decide_write_off', arguments: { caseId, decision: 'approve' } }, REQ);
      assert.equal(own.isError, true, JSON.stringify(own));
      const still = await nadia.callTool({ name: 'get_bike_status', arguments: { bikeId: BIKE_WRITE_OFF } }, REQ);
      assert.equal(still.structuredContent.status, 'unavailable');
      assert.equal(still.structuredContent.openCaseId, caseId);
      const approved = await step(nadia, 'decide_write_off', { decision: 'approve' });
      assert.equal(approved.state, 'closed');
      assert.equal(approved.resolution, 'written_off');
      assert.equal(approved.bikeStatus, 'retired');
    } finally {
      for (const c of [marie, olivia, tom, nadia]) await c.close();
    }
  });
});
