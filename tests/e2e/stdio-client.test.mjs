// E2E: the official v2 client launches `bikaroo-mcp stdio` as an IDE does (StdioClientTransport),
// in every era it offers: pinned 2026-07-28, 'auto', and the legacy 2025-11-25 and 2025-06-18.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { OTHER_REGION, VISIBLE, catalogueScenario, listenScenario, stdioServerParams } from './fleet-scenario.mjs';

const TEST_TIMEOUT_MS = 30_000;
const REQ = { timeout: 10_000 };

// Collects the server's stderr, so that a failure shows its log (stdout is the wire).
function launch(Transport = StdioClientTransport) {
  const transport = new Transport(stdioServerParams());
  const log = [];
  transport.stderr?.on('data', (chunk) => {
    log.push(String(chunk));
    if (log.length > 50) log.shift();
  });
  return { transport, log };
}

// The 2025-era SDK's client and transport (loaded only by the tests that use them).
async function launchV1(name) {
  const { Client: ClientV1 } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport: StdioV1 } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  return { ...launch(StdioV1), client: new ClientV1({ name, version: '1.0.0' }) };
}

async function withLog(log, fn) {
  try {
    return await fn();
  } catch (err) {
    if (err && typeof err === 'object') err.message = `${err.message}\n--- server stderr ---\n${log.join('')}`;
    throw err;
  }
}

const modes = [
  { name: "pinned to 2026-07-28", options: { versionNegotiation: { mode: { pin: '2026-07-28' } } }, era: 'modern', version: '2026-07-28' },
  { name: "'auto' (server/discover probe)", options: { versionNegotiation: { mode: 'auto', probe: { timeoutMs: 10_000 } } }, era: 'modern', version: '2026-07-28' },
  { name: 'legacy default (initialize, 2025-11-25)', options: {}, era: '2025-11-25', version: '2025-11-25' },
  { name: 'legacy 2025-06-18 only', options: { supportedProtocolVersions: ['2025-06-18'] }, era: '2025-06-18', version: '2025-06-18' },
];

describe('v2 client over stdio', { timeout: 3 * 60_000 }, () => {
  for (const mode of modes) {
    test(mode.name, { timeout: TEST_TIMEOUT_MS }, async () => {
      const { transport, log } = launch();
      const client = new Client({ name: 'bikaroo-e2e-stdio', version: '1.0.0' }, mode.options);
      try {
        await withLog(log, async () => {
          await client.connect(transport, REQ);
          assert.equal(client.getNegotiatedProtocolVersion(), mode.version);
          assert.equal(client.getServerVersion()?.name, 'bikaroo-fleet-mcp');
          const opts = mode.era === 'modern' ? { ...REQ, cacheMode: 'bypass' } : REQ;
          await catalogueScenario(client, { era: mode.era, opts, callTool: (p) => client.callTool(p, REQ) });
        });
      } finally {
        await client.close();
      }
    });
  }
});

// The 2025-era SDK over stdio, as IDEs ship it: logging/setLevel holds for the connection, and
// each tools/call then tells its outcome as a notifications/message at or above that level.
describe('SDK 1.32.2 over stdio: logging', { timeout: 60_000 }, () => {
  test('setLoggingLevel filters the outcome messages of tools/call', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { LoggingMessageNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const { transport, log, client } = await launchV1('bikaroo-e2e-v1-stdio');
    const messages = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { messages.push(n.params); });
    try {
      await withLog(log, async () => {
        await client.connect(transport, REQ);
        assert.ok(client.getServerCapabilities()?.logging, 'the server declares logging');
        const call = (bikeId) => client.callTool({ name: 'get_bike_status', arguments: { bikeId } }, undefined, REQ);

        await call(VISIBLE); // no level set yet: the server sends none
        assert.deepEqual(messages, []);

        await client.setLoggingLevel('info', REQ);
        await call(VISIBLE);
        assert.equal(messages.length, 1);
        assert.equal(messages[0].level, 'info');
        assert.equal(messages[0].logger, 'bikaroo.tools');
        assert.equal(messages[0].data.tool, 'get_bike_status');
        assert.equal(messages[0].data.bikeId, VISIBLE);
        assert.equal(messages[0].data.outcome, 'ok');

        await client.setLoggingLevel('warning', REQ);
        messages.length = 0;
        await call(VISIBLE); // ok is info: filtered out
        const failed = await call(OTHER_REGION); // another region: a tool error, a warning
        assert.equal(failed.isError, true);
        assert.equal(messages.length, 1);
        assert.equal(messages[0].level, 'warning');
        assert.equal(messages[0].data.outcome, 'failed');

        await assert.rejects(client.setLoggingLevel('loud', REQ), /-32602|Invalid/);
      });
    } finally {
      await client.close();
    }
  });
});

// The 2025-era SDK over stdio subscribes to a bike, files a report on it, and hears that the
// bike changed (PostgreSQL's change feed, migration 0006); after unsubscribing it hears nothing.
describe('SDK 1.32.2 over stdio: resource subscriptions', { timeout: 60_000 }, () => {
  test('subscribeResource, then notifications/resources/updated after a report', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const { transport, log, client } = await launchV1('bikaroo-e2e-v1-subscribe');
    const updated = [];
    let wake = () => {};
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); wake(); });
    const next = (ms) => new Promise((resolve) => {
      if (updated.length) return resolve(true);
      const timer = setTimeout(() => resolve(false), ms);
      wake = () => { clearTimeout(timer); resolve(true); };
    });
    const bikeId = 'VL-2063'; // FR-PAR, used by no other test
    const uri = `bikaroo://fleet/bikes/${bikeId}`;
    const report = () => client.callTool({ name: 'report_damaged_bike', arguments: { bikeId, issue: 'flat_tire' } }, undefined, REQ);
    try {
      await withLog(log, async () => {
        await client.connect(transport, REQ);
        assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
        await client.subscribeResource({ uri }, REQ);
        const filed = await report();
        assert.equal(filed.isError, false, JSON.stringify(filed));
        assert.ok(await next(10_000), 'notifications/resources/updated arrives');
        assert.equal(updated[0], uri);
        // The client reads it again and sees the change.
        const read = await client.readResource({ uri }, REQ);
        assert.equal(JSON.parse(read.contents[0].text).status, 'unavailable');

        await client.unsubscribeResource({ uri }, REQ);
        updated.length = 0;
        await report();
        assert.equal(await next(1_000), false, `nothing after unsubscribing, got ${updated}`);
      });
    } finally {
      await client.close();
    }
  });
});

// The 2026-07-28 client over stdio opens a subscriptions/listen stream for a bike, files a
// report, hears the update tagged for its stream, and hears nothing once it closes the stream.
describe('v2 client over stdio: subscriptions/listen', { timeout: 60_000 }, () => {
  test('listen({resourceSubscriptions}) then notifications/resources/updated', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { transport, log } = launch();
    const client = new Client({ name: 'bikaroo-e2e-listen', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await withLog(log, async () => {
        await client.connect(transport, REQ);
        // VL-2066: FR-PAR, used by no other test.
        await listenScenario(client, { bikeId: 'VL-2066', issue: 'lighting_fault', opts: REQ });
      });
    } finally {
      await client.close();
    }
  });
});
