// E2E: server-side confirmation of report_damaged_bike for a client application registered with requires_confirmation (careful-assistant), driven by the official v2 client (@modelcontextprotocol/client) at 2026-07-28: accept, decline, missing capability, forged, other-subject and expired requestState.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { rejection, slow, startServer as startAs } from './serve.mjs';

const TEST_TIMEOUT_MS = 20_000;
const REQ = { timeout: slow ? 30_000 : 10_000 };
const SECRET = 'e2e-confirmation-secret-0123456789abcdef';

// `bikaroo-mcp serve` acting as subject via careful-assistant (serve.mjs); resolves { url, stop }.
const startServer = (subject, extraEnv = {}) =>
  startAs(subject, 'careful-assistant', { BIKAROO_STATE_SECRET: SECRET, ...extraEnv });

// A v2 client pinned to 2026-07-28. answer: the elicitation result to give (null = no elicitation
// capability at all); manual: hand input_required back instead of fulfilling it.
async function connect(url, { answer = null, manual = false, seen = [] } = {}) {
  const client = new Client(
    { name: 'bikaroo-e2e-confirm', version: '1.0.0' },
    {
      versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: 10_000 } },
      capabilities: answer ? { elicitation: { form: {} } } : {},
      inputRequired: { autoFulfill: !manual },
    },
  );
  if (answer) {
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push(request.params);
      return answer;
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)), REQ);
  return client;
}

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const report = (client, bikeId, extra = {}, opts = {}) =>
  client.callTool({ name: 'report_damaged_bike', arguments: { bikeId, issue: 'flat_tire' }, ...extra }, { ...REQ, ...opts });
const status = async (client, bikeId) =>
  (await client.callTool({ name: 'get_bike_status', arguments: { bikeId } }, REQ)).structuredContent;

describe('server-side confirmation (careful-assistant), v2 client at 2026-07-28', { timeout: 4 * 60_000 }, () => {
  let marie, olivia, shortLived;

  before(async () => {
    marie = await startServer('marie');
    olivia = await startServer('olivia');
    shortLived = await startServer('marie', { BIKAROO_CONFIRM_TTL: '1' });
  }, { timeout: 3 * TEST_TIMEOUT_MS });

  after(async () => {
    for (const s of [marie, olivia, shortLived]) {
      const code = await s?.stop();
      assert.equal(code, 0, `server exit code ${code}: ${s?.log()}`);
    }
  }, { timeout: TEST_TIMEOUT_MS });

  test('accept: the form asks in the user\'s words (the bike, its region, the effect); then the report is filed', { timeout: TEST_TIMEOUT_MS }, async () => {
    const seen = [];
    const client = await connect(marie.url, { answer: { action: 'accept', content: { confirm: true } }, seen });
    try {
      const result = await report(client, 'VL-2147');
      assert.notEqual(result.isError, true, textOf(result));
      assert.equal(seen.length, 1, 'exactly one confirmation asked');
      assert.equal(seen[0].mode ?? 'form', 'form');
      for (const part of ['VL-2147', 'Paris', 'unavailable']) {
        assert.ok(seen[0].message.includes(part), `the message shows ${part}: ${seen[0].message}`);
      }
      for (const word of ['report_damaged_bike', 'marie', 'careful-assistant', 'FR-PAR', 'act as']) {
        assert.ok(!seen[0].message.includes(word), `the message says ${word}: ${seen[0].message}`);
      }
      assert.equal(seen[0].requestedSchema.properties.confirm.type, 'boolean');
      const sc = result.structuredContent;
      assert.match(sc.reportId, /^DR-\d+$/);
      assert.match(sc.caseId, /^IC-\d+$/);
      assert.equal(sc.status, 'unavailable');
      assert.ok(!Number.isNaN(Date.parse(sc.recordedAt)));
      const now = await status(client, 'VL-2147');
      assert.equal(now.status, 'unavailable');
      assert.equal(now.openCaseId, sc.caseId);
    } finally {
      await client.close();
    }
  });

  test('decline: nothing is written and the tool result says so', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(marie.url, { answer: { action: 'decline' } });
    try {
      const before = await status(client, 'VL-2150');
      const result = await report(client, 'VL-2150');
      assert.equal(result.isError, true);
      assert.match(textOf(result), /Nothing was reported/);
      assert.deepEqual(await status(client, 'VL-2150'), before);
    } finally {
      await client.close();
    }
  });

  test('a request without the elicitation capability gets -32021 naming it', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(marie.url);
    try {
      const err = await rejection(report(client, 'VL-2153'));
      assert.equal(err.code, -32021, String(err));
      assert.deepEqual(err.data?.requiredCapabilities, { elicitation: {} });
    } finally {
      await client.close();
    }
  });

  // Asks for a confirmation in manual mode and returns the input_required result.
  async function ask(client, bikeId) {
    const first = await report(client, bikeId, {}, { allowInputRequired: true });
    assert.equal(first.resultType, 'input_required', JSON.stringify(first));
    assert.equal(typeof first.requestState, 'string');
    assert.equal(first.inputRequests?.confirm?.method, 'elicitation/create');
    assert.equal(first.ttlMs, undefined);
    assert.equal(first.cacheScope, undefined);
    return first;
  }
  const accept = { confirm: { action: 'accept', content: { confirm: true } } };

  test('a forged or tampered requestState is refused with -32602 and writes nothing', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(marie.url, { answer: { action: 'accept', content: { confirm: true } }, manual: true });
    try {
      const before = await status(client, 'VL-2156');
      const { requestState } = await ask(client, 'VL-2156');
      const [body, mac] = requestState.split('.');
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
      payload.exp += 3600;
      const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
      for (const state of [forged, `${requestState}x`, 'not-a-state']) {
        const err = await rejection(report(client, 'VL-2156', { inputResponses: accept, requestState: state }, { allowInputRequired: true }));
        assert.equal(err.code, -32602, String(err));
      }
      // The genuine state with other arguments is refused as well.
      const err = await rejection(client.callTool({
        name: 'report_damaged_bike', arguments: { bikeId: 'VL-2156', issue: 'frame_damage' }, inputResponses: accept, requestState,
      }, { ...REQ, allowInputRequired: true }));
      assert.equal(err.code, -32602, String(err));
      assert.deepEqual(await status(client, 'VL-2156'), before);
    } finally {
      await client.close();
    }
  });

  test('a requestState issued to another subject is refused', { timeout: TEST_TIMEOUT_MS }, async () => {
    const m = await connect(marie.url, { answer: { action: 'accept', content: { confirm: true } }, manual: true });
    const o = await connect(olivia.url, { answer: { action: 'accept', content: { confirm: true } }, manual: true });
    try {
      const { requestState } = await ask(m, 'VL-2159');
      const before = await status(o, 'VL-2159');
      const err = await rejection(report(o, 'VL-2159', { inputResponses: accept, requestState }, { allowInputRequired: true }));
      assert.equal(err.code, -32602, String(err));
      assert.match(err.message, /another caller/);
      assert.deepEqual(await status(o, 'VL-2159'), before);
    } finally {
      await m.close();
      await o.close();
    }
  });

  test('an expired requestState is refused (BIKAROO_CONFIRM_TTL=1)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(shortLived.url, { answer: { action: 'accept', content: { confirm: true } }, manual: true });
    try {
      const before = await status(client, 'VL-2165');
      const { requestState } = await ask(client, 'VL-2165');
      await new Promise((r) => setTimeout(r, 2_500));
      const err = await rejection(report(client, 'VL-2165', { inputResponses: accept, requestState }, { allowInputRequired: true }));
      assert.equal(err.code, -32602, String(err));
      assert.match(err.message, /expired/);
      assert.deepEqual(await status(client, 'VL-2165'), before);
    } finally {
      await client.close();
    }
  });
});
