// E2E: every declared example (server/capabilities/NAME.json, each row's "example") called with the
// official v2 client (@modelcontextprotocol/client, 2026-07-28) as the callers the example names:
// its caller succeeds (a tool without isError, a template or resource read, a prompt), its outside
// caller finds nothing, its refused caller is not offered the row and is refused. Each caller gets
// a server of its own (serve.mjs); fixtures run as the database owner (IT_SUPER_URL). A failure
// names the declaration and what to change there. No row is named here: a new one is covered by
// being declared.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { runFixture, slow, startServer } from './serve.mjs';

const TEST_TIMEOUT_MS = slow ? 600_000 : 60_000;
const REQ = { timeout: 10_000 };
const dir = new URL('../../server/capabilities/', import.meta.url);

// Every row with an example: where it is declared, its kind, its name and what its declaration says.
const TABLES = { tools: 'tool', resources: 'resource', templates: 'template', prompts: 'prompt' };
const rows = [];
for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  const decl = JSON.parse(readFileSync(new URL(file, dir), 'utf8'));
  for (const [table, kind] of Object.entries(TABLES)) {
    (decl[table] ?? []).forEach((row, i) => {
      if (!row.example) return;
      rows.push({
        where: `server/capabilities/${file}: ${table}[${i}]`,
        kind,
        name: row.name,
        uri: row.uri ?? row.uri_template,
        example: row.example,
        // a read of one object (or a write) answers isError to a caller who cannot see it
        oneObject: decl.write !== undefined || decl.read?.returns === 'one',
      });
    });
  }
}

// A template's URI with the example's argument in its {variable}.
const uriOf = (row) => row.uri.replace(/\{([^}]+)\}/, (_, v) => encodeURIComponent(row.example.arguments[v] ?? ''));

// One server and one connected client per caller, started on first use.
const callers = new Map();
async function clientOf({ subject, client }) {
  const key = `${subject}|${client}`;
  if (!callers.has(key)) {
    const server = await startServer(subject, client);
    // The user confirms what a write asks them to (a write whose declaration confirms on the
    // server's side asks first); the client hands the answer back by itself.
    const c = new Client(
      { name: 'bikaroo-e2e-examples', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: 10_000 } },
        capabilities: { elicitation: { form: {} } },
        inputRequired: { autoFulfill: true },
      },
    );
    c.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
    await c.connect(new StreamableHTTPClientTransport(new URL(server.url)), REQ);
    callers.set(key, { server, client: c });
  }
  return callers.get(key).client;
}

// The row's call through c: its result, or { thrown: the error } when the request was refused.
async function callRow(c, row) {
  try {
    if (row.kind === 'tool') return await c.callTool({ name: row.name, arguments: row.example.arguments }, REQ);
    if (row.kind === 'prompt') return await c.getPrompt({ name: row.name, arguments: row.example.arguments }, REQ);
    return await c.readResource({ uri: row.kind === 'template' ? uriOf(row) : row.uri }, REQ);
  } catch (thrown) {
    return { thrown };
  }
}

const said = (r) => (r.thrown ? `the error ${r.thrown.code} "${r.thrown.message}"`
  : `isError ${JSON.stringify(r.content?.find((x) => x.type === 'text')?.text ?? r)}`);

// Whether c lists the row (every page of its list).
async function listed(c, row) {
  const [list, key, field] = {
    tool: ['listTools', 'tools', 'name'],
    resource: ['listResources', 'resources', 'uri'],
    template: ['listResourceTemplates', 'resourceTemplates', 'uriTemplate'],
    prompt: ['listPrompts', 'prompts', 'name'],
  }[row.kind];
  let cursor;
  for (let pages = 0; pages < 100; pages++) {
    const page = await c[list](cursor ? { cursor } : undefined, { ...REQ, cacheMode: 'bypass' });
    if (page[key].some((item) => item[field] === (row.kind === 'tool' || row.kind === 'prompt' ? row.name : row.uri))) return true;
    cursor = page.nextCursor;
    if (!cursor) return false;
  }
  return false;
}

describe('every declared example, as the callers it names', { timeout: 10 * TEST_TIMEOUT_MS }, () => {
  after(async () => {
    for (const { server, client } of callers.values()) {
      await client.close();
      assert.equal(await server.stop(), 0, 'a caller\'s server exited uncleanly');
    }
  }, { timeout: TEST_TIMEOUT_MS });

  test('the declarations have examples', () => assert.ok(rows.length > 0, 'no row of server/capabilities/*.json has an example'));

  for (const row of rows) {
    const { caller, outside, refused } = row.example;
    test(`${row.where}: ${row.kind} ${row.name ?? row.uri}`, { timeout: TEST_TIMEOUT_MS }, async () => {
      runFixture(row.example, row.where);
      const c = await clientOf(caller);
      assert.ok(await listed(c, row),
        `${row.where}.example.caller: ${caller.subject} via ${caller.client} is not offered the row: name a caller whose role the declaration's "roles" hold`);
      const ok = await callRow(c, row);
      assert.ok(!ok.thrown && ok.isError !== true,
        `${row.where}.example: the call as ${caller.subject} via ${caller.client} answered ${said(ok)}: give the example arguments that succeed for its caller, or a fixture that creates its rows`);
      if (outside) {
        const o = await callRow(await clientOf(outside), row);
        const nothing = row.kind === 'tool' ? !row.oneObject || o.isError === true : o.thrown?.code === -32602;
        assert.ok(nothing,
          `${row.where}.example.outside: ${outside.subject} via ${outside.client} got ${o.thrown ? said(o) : JSON.stringify(o).slice(0, 300)}: name a caller the roles allow whose perimeter holds none of the example's objects`);
      }
      if (refused) {
        const r = await clientOf(refused);
        assert.equal(await listed(r, row), false,
          `${row.where}.example.refused: ${refused.subject} via ${refused.client} is offered the row: name a caller whose role the declaration's "roles" leave out`);
        const no = await callRow(r, row);
        assert.ok(no.thrown || no.isError === true,
          `${row.where}.example.refused: the call as ${refused.subject} via ${refused.client} succeeded: name a caller whose role the declaration's "roles" leave out`);
      }
    });
  }
});
