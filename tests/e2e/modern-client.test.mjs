// E2E: the official v2 MCP client (@modelcontextprotocol/client) pinned to 2026-07-28, and in 'auto' mode, against the server at MCP_URL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { catalogueScenario, listenScenario } from './fleet-scenario.mjs';

const MCP_URL = process.env.MCP_URL;
if (!MCP_URL) throw new Error('MCP_URL is not set (e.g. http://127.0.0.1:PORT/mcp)');

const TEST_TIMEOUT_MS = 20_000;
const REQ = { timeout: 10_000 }; // per-request timeout handed to the client
const VISIBLE = 'VL-2048'; // demo bike in FR-PAR, the caller's region
const OTHER_REGION = 'VL-2047'; // demo bike in FR-LYO: must read like an unknown bike
const UNKNOWN = 'VL-999999'; // does not exist

// Records every HTTP exchange of the transport so that a failure shows what went over the wire.
function recordingFetch(log) {
  return async (url, init) => {
    const entry = { method: init?.method ?? 'GET', request: typeof init?.body === 'string' ? init.body : undefined };
    log.push(entry);
    if (log.length > 20) log.shift();
    const res = await fetch(url, init);
    entry.status = res.status;
    const type = res.headers.get('content-type') ?? '';
    if (!type.includes('text/event-stream')) {
      entry.response = (await res.clone().text()).slice(0, 2000);
    } else {
      entry.response = '(event stream)';
    }
    return res;
  };
}

// Runs fn; on failure, appends the last HTTP exchanges to the error message.
async function withWire(log, fn) {
  try {
    return await fn();
  } catch (err) {
    const wire = log.slice(-4).map((e) => `> ${e.method} ${e.request ?? ''}\n< ${e.status} ${e.response ?? ''}`).join('\n');
    if (err && typeof err === 'object') err.message = `${err.message}\n--- last HTTP exchanges ---\n${wire}`;
    throw err;
  }
}

function textOf(result) {
  assert.ok(Array.isArray(result.content), 'result.content must be an array');
  const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
  assert.ok(texts.length >= 1, 'result must carry at least one text content block');
  return texts.join('\n');
}

describe('v2 client pinned to 2026-07-28', { timeout: 4 * 60_000 }, () => {
  const wire = [];
  let client;

  before(async () => {
    client = new Client(
      { name: 'bikaroo-e2e-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: 10_000 } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: recordingFetch(wire) });
    await withWire(wire, () => client.connect(transport, REQ));
  }, { timeout: TEST_TIMEOUT_MS });

  after(async () => {
    await client?.close();
  }, { timeout: TEST_TIMEOUT_MS });

  const call = (bikeId) => client.callTool({ name: 'get_bike_status', arguments: { bikeId } }, REQ);
  // A bounded test whose failure message ends with the last HTTP exchanges.
  const wireTest = (name, fn) => test(name, { timeout: TEST_TIMEOUT_MS }, () => withWire(wire, fn));

  wireTest('connect + discover: 2026-07-28, server name, tools capability', async () => {
    assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
    assert.equal(client.getProtocolEra(), 'modern');
    assert.equal(client.getServerVersion()?.name, 'bikaroo-fleet-mcp');
    assert.equal(typeof client.getServerVersion()?.version, 'string');
    const caps = client.getServerCapabilities();
    assert.ok(caps && typeof caps.tools === 'object', `tools capability missing: ${JSON.stringify(caps)}`);
    const discover = client.getDiscoverResult();
    assert.ok(discover, 'the pinned connect must have recorded a server/discover result');
    assert.ok(discover.supportedVersions.includes('2026-07-28'), `supportedVersions: ${discover.supportedVersions}`);
    // An explicit discover after connect answers the same.
    const again = await client.discover(REQ);
    assert.ok(again.supportedVersions.includes('2026-07-28'));
    assert.ok(again.capabilities?.tools);
  });

  wireTest('tools/list: get_bike_status is described as read-only with input and output schemas', async () => {
    const { tools } = await client.listTools(undefined, { ...REQ, cacheMode: 'bypass' });
    const tool = tools.find((t) => t.name === 'get_bike_status');
    assert.ok(tool, `get_bike_status missing from ${tools.map((t) => t.name).join(', ')}`);
    assert.equal(tool.inputSchema.type, 'object');
    assert.ok(tool.inputSchema.properties?.bikeId, 'inputSchema must describe bikeId');
    assert.equal(tool.inputSchema.properties.bikeId.type, 'string');
    assert.deepEqual(tool.inputSchema.required, ['bikeId']);
    assert.ok(tool.outputSchema && tool.outputSchema.type === 'object', 'outputSchema must be an object schema');
    for (const field of ['bikeId', 'status', 'region', 'lastSeenAt']) {
      assert.ok(tool.outputSchema.properties?.[field], `outputSchema must describe ${field}`);
    }
    assert.equal(tool.annotations?.readOnlyHint, true);
    assert.equal(typeof tool.description, 'string');
    assert.ok(tool.description.length > 0);
  });

  wireTest(`tools/call get_bike_status ${VISIBLE}: structured status in the caller's region`, async () => {
    const result = await call(VISIBLE);
    assert.notEqual(result.isError, true, `unexpected tool error: ${JSON.stringify(result.content)}`);
    const sc = result.structuredContent;
    assert.ok(sc && typeof sc === 'object', 'structuredContent must be present');
    assert.equal(sc.bikeId, VISIBLE);
    assert.equal(sc.region, 'FR-PAR');
    assert.equal(typeof sc.status, 'string');
    assert.ok(sc.status.length > 0, 'status must be non-empty');
    assert.equal(typeof sc.lastSeenAt, 'string');
    assert.ok(!Number.isNaN(Date.parse(sc.lastSeenAt)), `lastSeenAt does not parse as a date: ${sc.lastSeenAt}`);
    // Backwards compatibility: the text content carries the same object as JSON.
    assert.deepEqual(JSON.parse(textOf(result)), sc);
  });

  wireTest('a bike in another region reads exactly like an unknown bike', async () => {
    const other = await call(OTHER_REGION);
    const unknown = await call(UNKNOWN);
    assert.equal(other.isError, true, `${OTHER_REGION} must be a tool error`);
    assert.equal(unknown.isError, true, `${UNKNOWN} must be a tool error`);
    const otherText = textOf(other);
    const unknownText = textOf(unknown);
    assert.ok(otherText.includes(OTHER_REGION), 'the message names the bike asked for');
    assert.doesNotMatch(otherText, /FR-LYO/, 'the message must not reveal the other region');
    assert.equal(otherText.split(OTHER_REGION).join('<id>'), unknownText.split(UNKNOWN).join('<id>'));
    // Nothing else in the two results (content blocks, structured data) tells them apart either.
    const shape = (r, id) => JSON.stringify({ content: r.content, structuredContent: r.structuredContent }).split(id).join('<id>');
    assert.equal(shape(other, OTHER_REGION), shape(unknown, UNKNOWN));
  });

  wireTest('the whole catalogue: resources, templates, prompts, completion (2026-07-28 shapes)', async () => {
    const caps = client.getServerCapabilities();
    for (const cap of ['resources', 'prompts', 'completions']) assert.ok(caps?.[cap], `${cap} capability missing`);
    const opts = { ...REQ, cacheMode: 'bypass' };
    await catalogueScenario(client, { era: 'modern', opts, callTool: (params) => client.callTool(params, REQ) });
  });

  for (const bad of ['VL-1', "'; DROP TABLE fleet.bikes; --"]) {
    wireTest(`malformed bike id ${JSON.stringify(bad)} is a tool error naming the expected form`, async () => {
      const result = await call(bad);
      assert.equal(result.isError, true);
      const text = textOf(result);
      assert.match(text, /VL-/, 'the message shows the expected form');
      assert.match(text, /4,6|4 to 6|four to six/i, 'the message gives the digit count');
      assert.doesNotMatch(text, /SQLSTATE|syntax error|relation "|ERROR:/i, 'no database error leaks');
      // The server and its data are intact afterwards.
      const ok = await call(VISIBLE);
      assert.notEqual(ok.isError, true);
      assert.equal(ok.structuredContent?.bikeId, VISIBLE);
      assert.equal(ok.structuredContent?.region, 'FR-PAR');
    });
  }
});

describe("v2 client in 'auto' mode (probes server/discover)", { timeout: 2 * 60_000 }, () => {
  test('finds the modern era and serves the whole catalogue', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = [];
    const client = new Client(
      { name: 'bikaroo-e2e-auto', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 10_000 } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: recordingFetch(wire) });
    try {
      await withWire(wire, async () => {
        await client.connect(transport, REQ);
        assert.equal(client.getProtocolEra(), 'modern');
        assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28');
        assert.ok(wire.some((e) => e.request?.includes('server/discover')), 'auto mode probes server/discover');
        assert.ok(!wire.some((e) => e.request?.includes('"initialize"')), 'no fallback to initialize');
        const opts = { ...REQ, cacheMode: 'bypass' };
        await catalogueScenario(client, { era: 'modern', opts, callTool: (params) => client.callTool(params, REQ) });
      });
    } finally {
      await client.close();
    }
  });
});

// subscriptions/listen over HTTP: a long-lived SSE stream (fleet-scenario.mjs).
describe('v2 client pinned to 2026-07-28: subscriptions/listen over HTTP', { timeout: 60_000 }, () => {
  test('listen({resourceSubscriptions}) hears a report on the bike', { timeout: TEST_TIMEOUT_MS }, async () => {
    const log = [];
    const client = new Client({ name: 'bikaroo-e2e-http-listen', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: recordingFetch(log) });
    try {
      await withWire(log, async () => {
        await client.connect(transport, REQ);
        // VL-2075: FR-PAR, used by no other test.
        await listenScenario(client, { bikeId: 'VL-2075', issue: 'chain_broken', opts: REQ });
      });
    } finally {
      await client.close();
    }
  });
});
