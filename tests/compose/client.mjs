// The official client (@modelcontextprotocol/client) against URL with a bearer token, as a host
// behind the compose proxy would: lists the tools, reads a bike, files a report with an
// idempotencyKey and retries it. Prints ok lines; exits 1 on the first failure.
//   node client.mjs URL TOKEN
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, token] = process.argv.slice(2);
const REQ = { timeout: 15_000 };
const connect = async () => {
  const client = new Client({ name: 'bikaroo-compose-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }), REQ);
  return client;
};
const client = await connect();
try {
  const { tools } = await client.listTools(undefined, REQ);
  console.log(`ok - client: tools/list through the proxy: ${tools.map((t) => t.name).join(', ')}`);
  const st = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: 'VL-2048' } }, REQ);
  if (st.isError || st.structuredContent?.bikeId !== 'VL-2048') throw new Error(JSON.stringify(st));
  console.log(`ok - client: get_bike_status VL-2048 as marie: ${st.structuredContent.status}`);
  const key = `compose-${Date.now()}`;
  const args = { bikeId: 'VL-2051', issue: 'flat_tire', idempotencyKey: key };
  const first = await client.callTool({ name: 'report_damaged_bike', arguments: args }, REQ);
  const again = await (await connect()).callTool({ name: 'report_damaged_bike', arguments: args }, REQ);
  const a = first.structuredContent?.reportId;
  if (first.isError || !a || again.structuredContent?.reportId !== a) throw new Error(`${JSON.stringify(first)} / ${JSON.stringify(again)}`);
  console.log(`ok - client: report_damaged_bike filed ${a}, its retry (same key, new connection) answered the same`);
} finally {
  await client.close();
}
