// E2E: the work queues (list_cases) and case-id completion with the official v2 client
// (@modelcontextprotocol/client, 2026-07-28), which checks every answer against the tool's
// output schema: a technician pages through the inspections waiting for him with nextCursor; a
// write-off olivia asked for waits in nadia's queue, not in hers; marie completes the id of her
// case from bikaroo://cases/{caseId} and paul, of another region, gets nothing of it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { slow, startServer } from './serve.mjs';

const T = { timeout: slow ? 300_000 : 60_000 };
const REQ = { timeout: slow ? 30_000 : 10_000 };
// FR-PAR bikes available in the demo data, used by no other e2e test.
const BIKES = ['VL-3215', 'VL-3218', 'VL-3221'];
const BIKE_WRITE_OFF = 'VL-3224';

describe('work queues with the official client', { timeout: 10 * 60_000, skip: !process.env.BIKAROO_BIN && 'BIKAROO_BIN not set' }, () => {
  const servers = [];
  const clients = {};

  before(async () => {
    for (const [who, app] of [['marie', 'customer-care-assistant'], ['paul', 'customer-care-assistant'],
      ['tom', 'ops-assistant'], ['olivia', 'ops-assistant'], ['nadia', 'ops-assistant']]) {
      const server = await startServer(who, app);
      servers.push(server);
      const client = new Client({ name: `bikaroo-e2e-queues-${who}`, version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities: { elicitation: { form: {} } } });
      // The write-off's confirmation on the server's side: the user accepts.
      client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { confirm: true } }));
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)), REQ);
      clients[who] = client;
    }
  }, T);

  after(async () => {
    for (const c of Object.values(clients)) await c.close();
    for (const s of servers) assert.equal(await s.stop(), 0, `a server did not stop cleanly: ${s.log()}`);
  }, T);

  const call = async (who, name, args) => {
    const r = await clients[who].callTool({ name, arguments: args }, REQ);
    assert.equal(r.isError, false, `${who} ${name}: ${JSON.stringify(r)}`);
    return r.structuredContent;
  };

  // Every page of who's queue for filters, following nextCursor.
  async function everyPage(who, filters) {
    const rows = [];
    let cursor;
    let pages = 0;
    do {
      const page = await call(who, 'list_cases', { ...filters, ...(cursor && { cursor }) });
      assert.ok(page.cases.length <= 20, `a page of ${page.cases.length}`);
      rows.push(...page.cases);
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    assert.equal(cursor, undefined, 'the queue ends');
    return rows;
  }

  test('a technician finds the inspections waiting for him, oldest first', T, async () => {
    const cases = [];
    for (const bikeId of BIKES) {
      const { caseId } = await call('marie', 'report_damaged_bike', { bikeId, issue: 'chain_broken' });
      await call('marie', 'request_inspection', { caseId, note: `look at ${bikeId}` });
      cases.push(caseId);
    }
    const rows = await everyPage('tom', { waitingForMe: true });
    const ours = rows.filter((r) => cases.includes(r.caseId));
    assert.deepEqual(ours.map((r) => r.caseId), cases, 'asked first, listed first');
    for (const r of ours) {
      assert.equal(r.state, 'inspection_requested');
      assert.equal(r.youMayAct, true);
      assert.deepEqual(r.nextSteps, ['record_inspection']);
      assert.equal(r.stepByName, 'Marie Dupont');
      assert.equal(r.regionName, 'Paris');
    }
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].since <= rows[i].since, 'oldest waiting first');
    // Once recorded, it waits for a fleet operator, not for him.
    await call('tom', 'record_inspection', { caseId: cases[0], finding: 'repairable' });
    assert.ok(!(await everyPage('tom', { waitingForMe: true })).some((r) => r.caseId === cases[0]));
    const toClose = await everyPage('olivia', { step: 'inspected', waitingForMe: true });
    assert.ok(toClose.some((r) => r.caseId === cases[0]), 'olivia has it to close');
  });

  test('a write-off waits for another fleet operator than the one who asked', T, async () => {
    const { caseId } = await call('marie', 'report_damaged_bike', { bikeId: BIKE_WRITE_OFF, issue: 'frame_damage' });
    await call('olivia', 'request_inspection', { caseId });
    await call('tom', 'record_inspection', { caseId, finding: 'beyond_repair' });
    await call('olivia', 'close_case', { caseId, resolution: 'written_off', note: 'frame cracked' });
    const decisions = { step: 'awaiting_approval', waitingForMe: true };
    assert.ok(!(await everyPage('olivia', decisions)).some((r) => r.caseId === caseId), 'not hers to decide');
    const row = (await everyPage('nadia', decisions)).find((r) => r.caseId === caseId);
    assert.ok(row, 'nadia has it to decide');
    assert.equal(row.writeOffRequestedByName, 'Olivia Leroy');
    assert.match(row.waitingFor, /other than Olivia Leroy/);
    assert.deepEqual(row.nextSteps, ['decide_write_off']);
  });

  test('case ids complete from the caller\'s own cases', T, async () => {
    const [{ caseId }] = (await call('marie', 'list_cases', { bikeId: BIKES[1] })).cases;
    const ref = { type: 'ref/resource', uri: 'bikaroo://cases/{caseId}' };
    const mine = await clients.marie.complete({ ref, argument: { name: 'caseId', value: caseId } }, REQ);
    assert.ok(mine.completion.values.includes(caseId), JSON.stringify(mine.completion));
    const digits = await clients.marie.complete({ ref, argument: { name: 'caseId', value: caseId.slice(3) } }, REQ);
    assert.ok(digits.completion.values.includes(caseId), 'typed without IC-');
    const other = await clients.paul.complete({ ref, argument: { name: 'caseId', value: caseId } }, REQ);
    assert.ok(!other.completion.values.includes(caseId), 'another region completes nothing of it');
    assert.deepEqual((await call('paul', 'list_cases', { bikeId: BIKES[1], includeClosed: true })).cases, []);
  });
});
