// E2E: the official v2 client launches `bikaroo-mcp stdio` as an IDE does (StdioClientTransport),
// in every era it offers: pinned 2026-07-28, 'auto', and the legacy 2025-11-25 and 2025-06-18.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { catalogueScenario, stdioServerParams } from './fleet-scenario.mjs';

const TEST_TIMEOUT_MS = 30_000;
const REQ = { timeout: 10_000 };

// Collects the server's stderr, so that a failure shows its log (stdout is the wire).
function launch() {
  const transport = new StdioClientTransport(stdioServerParams());
  const log = [];
  transport.stderr?.on('data', (chunk) => {
    log.push(String(chunk));
    if (log.length > 50) log.shift();
  });
  return { transport, log };
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
