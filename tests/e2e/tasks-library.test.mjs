// E2E: the official client-side Tasks library (@modelcontextprotocol/ext-tasks, pinned) over the
// official v2 client (@modelcontextprotocol/client) against a 2026-07-28 server, as a host
// developer wires it (docs/using.md, "Tasks from a host"): the library's options rawDispatch and
// v2RequestFraming, a rawDispatch whose headers merge case-insensitively. marie asks for an
// inspection on one instance: the library gets a task and polls it (tasks/get); tom, a technician
// on another instance, finds the case in his queue (list_cases) and records the finding; the
// library settles the task as completed, with the finding in the tool's result. A second request
// cancelled through the library settles as cancelled, and the case is open again. A host that
// lost the task id (it restarted: a new connection, nothing kept) finds the case again through
// the queues and case-id completion, is refused a second request in words that name the step,
// and reads the finding once the technician has recorded it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome, TaskCancelledError } from '@modelcontextprotocol/ext-tasks/client';
import { slow, startServer } from './serve.mjs';

const VERSION = '2026-07-28';
const INFO = { name: 'bikaroo-e2e-tasks-library', version: '1.0.0' };
const CAPS = { elicitation: { form: {} } };
// The product suggests polling every 30 s: a settle waits for at least one such turn.
const T = { timeout: slow ? 300_000 : 120_000 };
const REQ = { timeout: slow ? 30_000 : 10_000 };
// FR-PAR bikes available in the demo data, used by no other e2e test.
const BIKE_DONE = 'VL-3200';
const BIKE_CANCELLED = 'VL-3203';
const BIKE_LOST = 'VL-3206';

// The JSON-RPC messages of an HTTP answer (application/json or an SSE stream).
function messagesOf(contentType, text) {
  if (!contentType?.includes('text/event-stream')) return [JSON.parse(text)];
  return text.split('\n').filter((l) => l.startsWith('data:')).map((l) => JSON.parse(l.slice(5)));
}

// The host's raw request path for the library: one POST per request, the 2026-07-28 routing
// headers, then the library's own (it names the task in Mcp-Name). Headers is case-insensitive:
// the library's "Mcp-Name" replaces ours instead of being sent beside it. `sent` records the
// headers of each request, for the assertions below.
function rawDispatchTo(url, sent) {
  let seq = 0;
  return async (request, options = {}) => {
    const body = { jsonrpc: '2.0', ...request, id: request.id ?? `raw-${++seq}` };
    const headers = new Headers({
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': VERSION,
      'Mcp-Method': body.method,
    });
    const name = body.params?.name ?? body.params?.taskId;
    if (name !== undefined) headers.set('mcp-name', name);
    for (const [k, v] of Object.entries(options.context?.headers ?? {})) headers.set(k, v);
    sent.push({ method: body.method, mcpName: headers.get('mcp-name') });
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: options.signal });
    const text = await res.text();
    const answer = messagesOf(res.headers.get('content-type'), text).find((m) => m.id === body.id);
    if (!answer) throw new Error(`HTTP ${res.status} without an answer to ${body.method}: ${text}`);
    return answer.error ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result };
  };
}

async function connect(server) {
  const client = new Client(INFO, { versionNegotiation: { mode: { pin: VERSION } }, capabilities: CAPS });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)), REQ);
  return client;
}

// The library's session over client, talking to server (its own raw path).
function tasksSession(client, server, sent) {
  return createTaskSessionFromClient(client, {
    endpointId: `bikaroo-e2e-${server.url}`,
    rawDispatch: rawDispatchTo(server.url, sent),
    v2RequestFraming: { protocolVersion: VERSION, clientInfo: INFO, clientCapabilities: CAPS },
  });
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, REQ);
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r)}`);
  return r.structuredContent;
}

describe('the official Tasks library over the case workflow, two instances', { timeout: 10 * 60_000, skip: !process.env.BIKAROO_BIN && 'BIKAROO_BIN not set' }, () => {
  let marieSrv;
  let tomSrv;
  let marie;
  let tom;

  before(async () => {
    marieSrv = await startServer('marie', 'customer-care-assistant');
    tomSrv = await startServer('tom', 'ops-assistant');
    marie = await connect(marieSrv);
    tom = await connect(tomSrv);
  }, T);

  after(async () => {
    for (const c of [marie, tom]) await c?.close();
    for (const s of [marieSrv, tomSrv]) if (s) assert.equal(await s.stop(), 0, `a server did not stop cleanly: ${s.log()}`);
  }, T);

  test('an inspection asked through the library, recorded by a technician on another instance, settles completed', T, async () => {
    const { caseId } = await call(marie, 'report_damaged_bike', { bikeId: BIKE_DONE, issue: 'brake_failure' });
    const sent = [];
    const session = tasksSession(marie, marieSrv, sent);
    try {
      const execution = await session.callTool('request_inspection', { caseId, note: 'brakes squeal' });
      assert.equal(execution.kind, 'task', 'a task, not an immediate result');
      const events = [];
      const settling = execution.settle({ onEvent: (e) => { events.push(e); } });

      // The requester lost nothing, but anyone can find the case again through the queues: it
      // waits for a technician, and tom has it among the cases waiting for him.
      const mine = await call(marie, 'list_cases', { bikeId: BIKE_DONE });
      assert.deepEqual(mine.cases.map((c) => [c.caseId, c.state]), [[caseId, 'inspection_requested']]);
      const queue = await call(tom, 'list_cases', { waitingForMe: true, step: 'inspection_requested', region: 'FR-PAR' });
      const row = queue.cases.find((c) => c.caseId === caseId);
      assert.ok(row, `tom's queue lacks ${caseId}: ${JSON.stringify(queue)}`);
      assert.equal(row.youMayAct, true);
      assert.deepEqual(row.nextSteps, ['record_inspection']);

      await call(tom, 'record_inspection', { caseId, finding: 'repairable', note: 'pads worn' });

      const { outcome } = await settling;
      assert.equal(outcome.status, 'completed', `the library saw: ${JSON.stringify(outcome, (k, v) => (v instanceof Error ? String(v) : v))}`);
      const result = resultFromTaskOutcome(outcome);
      assert.equal(result.isError, false);
      assert.equal(result.resultType, 'complete');
      assert.equal(result.structuredContent.caseId, caseId);
      assert.equal(result.structuredContent.state, 'inspected');
      assert.equal(result.structuredContent.finding, 'repairable');
      // It polled: tasks/get until the step was done, each naming the task in one Mcp-Name.
      const polls = sent.filter((s) => s.method === 'tasks/get');
      assert.ok(polls.length >= 1, JSON.stringify(sent));
      for (const p of polls) assert.equal(p.mcpName, execution.handle.taskId);
      assert.ok(events.some((e) => e.type === 'outcome'), JSON.stringify(events));
    } finally {
      await session.close();
    }
  });

  test('a host that lost the task id finds the case again through the queues, and the finding once recorded', T, async () => {
    const { caseId } = await call(marie, 'report_damaged_bike', { bikeId: BIKE_LOST, issue: 'chain_broken' });
    const session = tasksSession(marie, marieSrv, []);
    try {
      const execution = await session.callTool('request_inspection', { caseId, note: 'chain off twice' });
      assert.equal(execution.kind, 'task');
      // The host stops following it and restarts: the task id is gone with it. (detach() leaves
      // the step waiting; the library's close() would cancel the task, withdrawing the request.)
      await execution.detach();
      const again = await connect(marieSrv);
      try {
        // The bike's cases: the case, its step, what it waits for, who asked and why.
        const mine = await call(again, 'list_cases', { bikeId: BIKE_LOST, includeClosed: true });
        assert.equal(mine.cases.length, 1, JSON.stringify(mine));
        const [row] = mine.cases;
        assert.deepEqual([row.caseId, row.state, row.stepBy, row.stepNote], [caseId, 'inspection_requested', 'marie', 'chain off twice']);
        assert.equal(row.waitingFor, 'the inspection, by a technician of Paris');
        // Completion of the case template offers it from its digits too.
        const ref = { type: 'ref/resource', uri: 'bikaroo://cases/{caseId}' };
        const done = await again.complete({ ref, argument: { name: 'caseId', value: caseId.slice(3) } }, REQ);
        assert.ok(done.completion.values.includes(caseId), JSON.stringify(done.completion));
        // Asking again is refused while the step waits: in words for people, the step and what
        // comes next for the program; nothing changes.
        const twice = await again.callTool({ name: 'request_inspection', arguments: { caseId } }, REQ);
        assert.equal(twice.isError, true, JSON.stringify(twice));
        assert.equal(twice.content[0].text, `Case ${caseId} is already waiting for a technician's inspection. Nothing was changed.`);
        assert.deepEqual([twice.structuredContent.caseId, twice.structuredContent.state, twice.structuredContent.nextSteps],
          [caseId, 'inspection_requested', ['record_inspection']]);
        // tom records the finding: the case, read again or in the queue, has it.
        await call(tom, 'record_inspection', { caseId, finding: 'repairable', note: 'new chain' });
        const read = await again.readResource({ uri: `bikaroo://cases/${caseId}` }, REQ);
        const kase = JSON.parse(read.contents[0].text);
        assert.deepEqual([kase.state, kase.finding], ['inspected', 'repairable']);
        const after = await call(again, 'list_cases', { bikeId: BIKE_LOST });
        assert.deepEqual(after.cases.map((c) => [c.caseId, c.state, c.finding]), [[caseId, 'inspected', 'repairable']]);
      } finally {
        await again.close();
      }
    } finally {
      await session.close(); // the task is completed by now: nothing is withdrawn
    }
  });

  test('a task cancelled through the library settles as cancelled and reopens the case', T, async () => {
    const { caseId } = await call(marie, 'report_damaged_bike', { bikeId: BIKE_CANCELLED, issue: 'flat_tire' });
    const sent = [];
    const session = tasksSession(marie, marieSrv, sent);
    try {
      const execution = await session.callTool('request_inspection', { caseId });
      assert.equal(execution.kind, 'task');
      const settling = execution.settle();
      await execution.cancel();
      const { outcome } = await settling;
      assert.equal(outcome.status, 'cancelled', JSON.stringify(outcome));
      assert.throws(() => resultFromTaskOutcome(outcome), TaskCancelledError);
      assert.ok(sent.some((s) => s.method === 'tasks/cancel' && s.mcpName === execution.handle.taskId), JSON.stringify(sent));
      const back = await call(marie, 'list_cases', { bikeId: BIKE_CANCELLED });
      assert.deepEqual(back.cases.map((c) => [c.caseId, c.state]), [[caseId, 'open']]);
    } finally {
      await session.close();
    }
  });
});
