// Shared by the e2e files: what every client, era and transport must see of the Bikaroo catalogue
// (tools, resources, templates, prompts, completion), asserted on real content.
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const VISIBLE = 'VL-2048'; // demo bike in FR-PAR, the caller's region
export const OTHER_REGION = 'VL-2047'; // demo bike in FR-LYO: must read like an unknown bike
export const STATUS_URI = 'bikaroo://fleet/status-codes';
export const PROCEDURE_URI = 'bikaroo://procedures/damaged-bike';
export const CATALOG_URI = 'bikaroo://catalog';
export const REGIONS_URI = 'bikaroo://fleet/regions';
export const GOVERNANCE = 'com.bikaroo/governance';
export const BIKE_TEMPLATE = 'bikaroo://fleet/bikes/{bikeId}';
export const PROMPT = 'investigate-damaged-bike';

// The status codes of bikaroo://fleet/status-codes (its text), checked for what every client
// relies on: each a code with a label, a description and whether a bike can be rented, no code
// twice, `available` rentable and some code not. The resource is the list: no copy of it here.
export function statusCodesOf(text) {
  const table = JSON.parse(text).statusCodes;
  assert.ok(Array.isArray(table) && table.length > 1, `no status codes: ${text}`);
  for (const c of table) {
    assert.match(c.code, /^[a-z][a-z_]*$/);
    assert.ok(c.label && c.description, `code ${c.code} lacks label or description`);
    assert.equal(typeof c.rentable, 'boolean', `code ${c.code}: rentable`);
  }
  const codes = table.map((c) => c.code);
  assert.equal(new Set(codes).size, codes.length, `a code twice: ${codes}`);
  assert.equal(table.find((c) => c.code === 'available')?.rentable, true);
  assert.ok(table.some((c) => !c.rentable), 'every code rentable');
  return codes;
}

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// How an IDE launches the server over stdio: the binary, `stdio`, and the environment
// (database URL, document directories, the local identity). Everything else is inherited.
export function stdioServerParams() {
  const bin = process.env.BIKAROO_BIN;
  if (!bin) throw new Error('BIKAROO_BIN is not set (scripts/test.sh exports it)');
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is not set (scripts/test.sh exports it)');
  const wrapper = (process.env.BIKAROO_WRAPPER ?? '').split(' ').filter(Boolean);
  const argv = [...wrapper, bin, 'stdio'];
  return {
    command: argv[0],
    args: argv.slice(1),
    cwd: repo,
    stderr: 'pipe',
    env: {
      DATABASE_URL: process.env.DATABASE_URL,
      BIKAROO_RESOURCES_DIR: path.join(repo, 'resources'),
      BIKAROO_PROMPTS_DIR: path.join(repo, 'prompts'),
      BIKAROO_AUTH: 'local', // explicit: tokens are the default (a development database allows this)
      BIKAROO_LOCAL_SUBJECT: 'marie',
      BIKAROO_LOCAL_CLIENT: 'customer-care-assistant',
      BIKAROO_LOG_LEVEL: 'warn',
    },
  };
}

// The error code of a rejected request, whatever the client line calls its error class.
export async function errorCodeOf(promise) {
  try {
    await promise;
  } catch (err) {
    return err?.code;
  }
  assert.fail('the request was expected to fail');
}

// The whole catalogue through one connected client. `era` is 'modern' or a 2025 revision; `call`
// adapts the v1/v2 differences: call.tool(params), call.opts (request options).
export async function catalogueScenario(client, { era, callTool, opts }) {
  const modern = era === 'modern';
  const titles = modern || era >= '2025-06-18';

  // tools
  const { tools } = await client.listTools(undefined, opts);
  const tool = tools.find((t) => t.name === 'get_bike_status');
  assert.ok(tool, `get_bike_status missing from ${tools.map((t) => t.name).join(', ')}`);
  assert.deepEqual(tool.inputSchema.required, ['bikeId']);
  assert.equal(tool.annotations?.readOnlyHint, true);
  // every descriptor carries its governance (from 2025-06-18 on, where descriptors have _meta)
  if (titles) {
    assert.match(tool._meta?.[GOVERNANCE]?.version ?? '', /^\d+\.\d+\.\d+$/);
    assert.equal(tool._meta[GOVERNANCE].lifecycle, 'stable');
  } else assert.equal(tool._meta, undefined);
  const call = await callTool({ name: 'get_bike_status', arguments: { bikeId: VISIBLE } });
  assert.notEqual(call.isError, true, `unexpected tool error: ${JSON.stringify(call.content)}`);
  const status = JSON.parse(call.content.find((c) => c.type === 'text').text);
  assert.equal(status.bikeId, VISIBLE);
  assert.equal(status.region, 'FR-PAR');
  if (era !== '2025-03-26') assert.deepEqual(call.structuredContent, status);

  // resources
  const { resources } = await client.listResources(undefined, opts);
  assert.deepEqual(resources.map((r) => r.uri).sort(), [CATALOG_URI, PROCEDURE_URI, REGIONS_URI, STATUS_URI].sort());
  // the catalogue: what this caller may use, each with its governance and contract version
  const catalog = JSON.parse((await client.readResource({ uri: CATALOG_URI }, opts)).contents[0].text);
  const entry = catalog.capabilities.find((c) => c.kind === 'tool' && c.name === 'get_bike_status');
  assert.equal(entry?.version, tool._meta?.[GOVERNANCE]?.version ?? entry?.version);
  assert.equal(entry.risk, 'low');
  assert.ok(catalog.capabilities.some((c) => c.kind === 'prompt' && c.name === PROMPT));
  const codesEntry = resources.find((r) => r.uri === STATUS_URI);
  assert.equal(codesEntry.mimeType, 'application/json');
  assert.equal(typeof codesEntry.description, 'string');
  if (titles) assert.equal(typeof codesEntry.title, 'string');
  else assert.equal(codesEntry.title, undefined, 'no title before 2025-06-18');

  const { resourceTemplates } = await client.listResourceTemplates(undefined, opts);
  const tpl = resourceTemplates.find((t) => t.uriTemplate === BIKE_TEMPLATE);
  assert.ok(tpl, `template missing from ${JSON.stringify(resourceTemplates)}`);
  assert.equal(tpl.mimeType, 'application/json');

  const codes = await client.readResource({ uri: STATUS_URI }, opts);
  assert.equal(codes.contents.length, 1);
  assert.equal(codes.contents[0].uri, STATUS_URI);
  assert.equal(codes.contents[0].mimeType, 'application/json');
  // The bike's status is one of the codes the resource explains.
  const known = statusCodesOf(codes.contents[0].text);
  assert.ok(known.includes(status.status), `status ${status.status} is none of ${known}`);
  if (modern) {
    assert.equal(codes.cacheScope, 'public');
    assert.equal(typeof codes.ttlMs, 'number');
  }

  // Every region named: the one the bike's status gives by its code too.
  const regions = await client.readResource({ uri: REGIONS_URI }, opts);
  assert.equal(regions.contents[0].mimeType, 'application/json');
  const named = JSON.parse(regions.contents[0].text).regions;
  assert.equal(named.find((g) => g.code === status.region)?.name, 'Paris');
  if (modern) assert.equal(regions.cacheScope, 'public');

  const proc = await client.readResource({ uri: PROCEDURE_URI }, opts);
  assert.equal(proc.contents[0].mimeType, 'text/markdown');
  assert.match(proc.contents[0].text, /^# Procedure: a bike is reported damaged/);
  assert.match(proc.contents[0].text, /report_damaged_bike/);

  const bike = await client.readResource({ uri: `bikaroo://fleet/bikes/${VISIBLE}` }, opts);
  assert.deepEqual(JSON.parse(bike.contents[0].text), status);
  if (modern) assert.equal(bike.cacheScope, 'private');

  // A bike outside the perimeter is "Resource not found": -32602 now, -32002 on the 2025 wire (the
  // v2 client folds a received -32002 into -32602, so callers that see the wire check it there).
  const code = await errorCodeOf(client.readResource({ uri: `bikaroo://fleet/bikes/${OTHER_REGION}` }, opts));
  if (modern) assert.equal(code, -32602);
  else assert.ok([-32002, -32602].includes(code), `resource not found gave ${code}`);

  // prompts
  const { prompts } = await client.listPrompts(undefined, opts);
  const prompt = prompts.find((p) => p.name === PROMPT);
  assert.ok(prompt, `${PROMPT} missing`);
  assert.deepEqual(
    prompt.arguments.map((a) => [a.name, a.required]),
    [['bikeId', true], ['symptom', false]],
  );
  const symptom = 'the rear wheel {{bikeId}} <b>grinds</b>';
  const got = await client.getPrompt({ name: PROMPT, arguments: { bikeId: VISIBLE, symptom } }, opts);
  assert.ok(got.messages.length >= 3);
  const first = got.messages[0];
  assert.equal(first.role, 'user');
  assert.match(first.content.text, new RegExp(`Bike ${VISIBLE} has been reported damaged`));
  assert.ok(first.content.text.includes(symptom), 'the symptom is inserted literally');
  const embedded = got.messages.find((m) => m.content.type === 'resource');
  assert.equal(embedded?.content.resource.uri, PROCEDURE_URI);
  const all = got.messages.map((m) => m.content.text ?? '').join('\n');
  for (const name of ['get_bike_status', 'report_damaged_bike', STATUS_URI]) {
    assert.ok(all.includes(name), `the prompt points at ${name}`);
  }
  assert.equal(await errorCodeOf(client.getPrompt({ name: PROMPT, arguments: {} }, opts)), -32602);

  // completion
  const done = await client.complete(
    { ref: { type: 'ref/prompt', name: PROMPT }, argument: { name: 'bikeId', value: 'VL-204' } },
    opts,
  );
  assert.ok(done.completion.values.includes(VISIBLE), JSON.stringify(done.completion));
  assert.ok(!done.completion.values.includes(OTHER_REGION), 'completion stays inside the perimeter');
  assert.ok(done.completion.values.every((v) => v.startsWith('VL-204')));
}

// subscriptions/listen as a 2026-07-28 host uses it, on a connected v2 client: listen to a bike
// (and to one of another region, which must not be honoured), file a report on it, hear the
// update; close the stream, report again, hear nothing. opts: per-request options.
export async function listenScenario(client, { bikeId, issue, opts }) {
  const updated = [];
  let wake = () => {};
  client.setNotificationHandler('notifications/resources/updated', (n) => { updated.push(n.params?.uri ?? n.uri); wake(); });
  const next = (ms) => new Promise((resolve) => {
    if (updated.length) return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    wake = () => { clearTimeout(timer); resolve(true); };
  });
  const uri = `bikaroo://fleet/bikes/${bikeId}`;
  const report = () => client.callTool({ name: 'report_damaged_bike', arguments: { bikeId, issue } }, opts);
  assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
  const sub = await client.listen({ resourceSubscriptions: [uri, `bikaroo://fleet/bikes/${OTHER_REGION}`] }, opts);
  assert.deepEqual(sub.honoredFilter.resourceSubscriptions, [uri]); // the other region is not honoured
  const filed = await report();
  assert.equal(filed.isError, false, JSON.stringify(filed));
  assert.ok(await next(10_000), 'notifications/resources/updated arrives');
  assert.equal(updated[0], uri);
  await sub.close();
  updated.length = 0;
  await report();
  assert.equal(await next(1_000), false, `nothing after closing the stream, got ${updated}`);
}
