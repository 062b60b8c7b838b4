// E2E: 2025-era clients (v2 client in legacy mode, v2 pinned to 2025-06-18, v1 SDK 1.32.2) against the server at MCP_URL.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { catalogueScenario } from './fleet-scenario.mjs';

const MCP_URL = process.env.MCP_URL;
if (!MCP_URL) throw new Error('MCP_URL is not set (e.g. http://127.0.0.1:PORT/mcp)');

const TEST_TIMEOUT_MS = 20_000;
const REQ = { timeout: 10_000 }; // per-request timeout handed to the client
const VISIBLE = 'VL-2048'; // demo bike in FR-PAR, the caller's region
const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

// Records every HTTP exchange of the transport so that a failure shows what went over the wire.
function recordingFetch(log) {
  return async (url, init) => {
    const headers = new Headers(init?.headers);
    const entry = {
      method: init?.method ?? 'GET',
      protocolHeader: headers.get('mcp-protocol-version'),
      request: typeof init?.body === 'string' ? init.body : undefined,
    };
    log.push(entry);
    if (log.length > 100) log.shift();
    const res = await fetch(url, init);
    entry.status = res.status;
    entry.sessionId = res.headers.get('mcp-session-id');
    const type = res.headers.get('content-type') ?? '';
    entry.full = type.includes('text/event-stream') ? '' : await res.clone().text();
    entry.response = type.includes('text/event-stream') ? '(event stream)' : entry.full.slice(0, 2000);
    return res;
  };
}

// Runs fn; on failure, appends the last HTTP exchanges to the error message.
async function withWire(log, fn) {
  try {
    return await fn();
  } catch (err) {
    const wire = log
      .slice(-5)
      .map((e) => `> ${e.method} [MCP-Protocol-Version: ${e.protocolHeader ?? '-'}] ${e.request ?? ''}\n< ${e.status} ${e.response ?? ''}`)
      .join('\n');
    if (err && typeof err === 'object') err.message = `${err.message}\n--- last HTTP exchanges ---\n${wire}`;
    throw err;
  }
}

// The common scenario: connect, list tools, call get_bike_status on the visible demo bike.
// callTool differs between the lines: v2 is callTool(params, options), v1 is callTool(params, resultSchema, options).
// A failure message ends with the last HTTP exchanges.
async function scenario(args) {
  try {
    await withWire(args.wire, () => scenarioBody(args));
  } finally {
    await args.client.close();
  }
}

async function scenarioBody({ client, transport, wire, expectVersion, callTool }) {
  await client.connect(transport, REQ);
  const version = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion;
  if (expectVersion) assert.equal(version, expectVersion);
  else assert.ok(LEGACY_VERSIONS.includes(version), `negotiated ${version}, expected a 2025 revision`);
  assert.equal(client.getServerVersion()?.name, 'bikaroo-fleet-mcp');
  assert.ok(client.getServerCapabilities()?.tools, 'tools capability missing');
  // The legacy handshake goes through initialize, never server/discover.
  assert.ok(wire.some((e) => e.request?.includes('"initialize"')), 'the client sent no initialize');
  assert.ok(!wire.some((e) => e.request?.includes('server/discover')), 'a legacy client must not probe server/discover');

  const { tools } = await client.listTools(undefined, REQ);
  const tool = tools.find((t) => t.name === 'get_bike_status');
  assert.ok(tool, `get_bike_status missing from ${tools.map((t) => t.name).join(', ')}`);
  assert.deepEqual(tool.inputSchema.required, ['bikeId']);
  assert.equal(tool.annotations?.readOnlyHint, true);

  const result = await callTool({ name: 'get_bike_status', arguments: { bikeId: VISIBLE } });
  assert.notEqual(result.isError, true, `unexpected tool error: ${JSON.stringify(result.content)}`);
  assert.equal(result.structuredContent?.bikeId, VISIBLE);
  assert.equal(result.structuredContent?.region, 'FR-PAR');
  const text = result.content.find((c) => c.type === 'text')?.text;
  assert.deepEqual(JSON.parse(text), result.structuredContent);

  // Resources, templates, prompts and completion in the negotiated revision's shapes.
  for (const cap of ['resources', 'prompts', 'completions']) assert.ok(client.getServerCapabilities()?.[cap], `${cap} capability missing`);
  await catalogueScenario(client, { era: version, opts: REQ, callTool });
  // Legacy results never carry the 2026 fields, and no session is minted.
  const posts = wire.filter((e) => e.method === 'POST' && e.status === 200 && e.full?.startsWith('{'));
  for (const e of posts) {
    const body = JSON.parse(e.full);
    if (body.result) {
      for (const key of ['resultType', 'ttlMs', 'cacheScope']) assert.ok(!(key in body.result), `legacy result carries ${key}: ${e.response.slice(0, 200)}`);
    }
  }
  assert.ok(wire.every((e) => !e.sessionId), 'no Mcp-Session-Id is minted');
  // On the 2025 wire, resource-not-found is -32002 with data.uri.
  const miss = posts.map((e) => JSON.parse(e.full)).find((b) => b.error?.data?.uri?.endsWith('VL-2047'));
  assert.equal(miss?.error.code, -32002, 'the 2025 wire carries -32002 for a missing resource');
}

describe('2025-era clients', { timeout: 2 * 60_000 }, () => {
  test('v2 client, default (legacy initialize) mode', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = [];
    const client = new ClientV2({ name: 'bikaroo-e2e-v2-legacy', version: '1.0.0' });
    const transport = new TransportV2(new URL(MCP_URL), { fetch: recordingFetch(wire) });
    const callTool = (params) => client.callTool(params, REQ);
    await scenario({ client, transport, wire, expectVersion: '2025-11-25', callTool });
  });

  test('v2 client with supportedProtocolVersions [2025-06-18]', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = [];
    const client = new ClientV2(
      { name: 'bikaroo-e2e-v2-2025-06-18', version: '1.0.0' },
      { supportedProtocolVersions: ['2025-06-18'] },
    );
    const transport = new TransportV2(new URL(MCP_URL), { fetch: recordingFetch(wire) });
    const callTool = (params) => client.callTool(params, REQ);
    await scenario({ client, transport, wire, expectVersion: '2025-06-18', callTool });
    const init = JSON.parse(wire.find((e) => e.request?.includes('"initialize"')).request);
    assert.equal(init.params.protocolVersion, '2025-06-18', 'the client offered only 2025-06-18');
    const later = wire.filter((e) => e.method === 'POST' && !e.request?.includes('"initialize"'));
    assert.ok(later.length >= 2 && later.every((e) => e.protocolHeader === '2025-06-18'), 'later requests carry MCP-Protocol-Version: 2025-06-18');
  });

  test('v1 SDK client 1.32.2 (initialize, Streamable HTTP)', { timeout: TEST_TIMEOUT_MS }, async () => {
    const wire = [];
    const client = new ClientV1({ name: 'bikaroo-e2e-v1', version: '1.0.0' });
    const transport = new TransportV1(new URL(MCP_URL), { fetch: recordingFetch(wire) });
    const callTool = (params) => client.callTool(params, undefined, REQ);
    await scenario({ client, transport, wire, callTool });
  });
});
