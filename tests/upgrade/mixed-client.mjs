// mixed-client.mjs LIST_URL CALL_URL TOKEN BIKE TAG: the official client
// (@modelcontextprotocol/client, pinned in tests/package.json) as a host behind a round-robin
// proxy during a rolling upgrade sees it: it lists the tools on one instance (LIST_URL) and
// calls them on another (CALL_URL), and checks each answer's structuredContent against the
// outputSchema it listed. Both eras (2026-07-28 pinned; 2025-11-25 through initialize), both
// tools with an output schema: get_bike_status BIKE, and report_damaged_bike BIKE with a
// description and an idempotency key made of TAG. Prints one JSON line per call: {era, tool, ok, error, undeclared}
// (undeclared: properties of the answer the listed schema does not declare). Bounded: every
// request has a 10 s timeout.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [listUrl, callUrl, token, bike, tag] = process.argv.slice(2);
const REQ = { timeout: 10_000 };
const ERAS = {
  '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  '2025-11-25': { supportedProtocolVersions: ['2025-11-25'] },
};

// Every request to LIST_URL but tools/call, which goes to CALL_URL.
function routed() {
  return async (url, init) => {
    let method;
    try {
      method = JSON.parse(typeof init?.body === 'string' ? init.body : '{}').method;
    } catch {
      method = undefined;
    }
    return fetch(method === 'tools/call' ? callUrl : url, init);
  };
}

for (const [era, options] of Object.entries(ERAS)) {
  const client = new Client({ name: 'bikaroo-upgrade-mixed', version: '1.0.0' }, options);
  const transport = new StreamableHTTPClientTransport(new URL(listUrl), {
    fetch: routed(),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  try {
    await client.connect(transport, REQ);
    const { tools } = await client.listTools(undefined, REQ);
    const calls = [
      ['get_bike_status', { bikeId: bike }],
      ['report_damaged_bike', { bikeId: bike, issue: 'flat_tire', description: `${tag}-${era}`, idempotencyKey: `${tag}-${era}` }],
    ];
    for (const [name, args] of calls) {
      const listed = tools.find((t) => t.name === name);
      try {
        const r = await client.callTool({ name, arguments: args }, REQ);
        const declared = Object.keys(listed?.outputSchema?.properties ?? {});
        const undeclared = Object.keys(r.structuredContent ?? {}).filter((k) => !declared.includes(k));
        console.log(JSON.stringify({ era, tool: name, ok: r.isError !== true, error: r.isError ? JSON.stringify(r.content) : '', undeclared }));
      } catch (e) {
        console.log(JSON.stringify({ era, tool: name, ok: false, error: `${e.code ?? ''} ${e.message}`.trim(), undeclared: [] }));
      }
    }
  } catch (e) {
    console.log(JSON.stringify({ era, tool: '(connect, tools/list)', ok: false, error: `${e.code ?? ''} ${e.message}`.trim(), undeclared: [] }));
  } finally {
    await client.close().catch(() => {});
  }
}
