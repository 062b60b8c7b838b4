// E2E: @modelcontextprotocol/inspector 2.12.0 --cli, modern and legacy eras, over HTTP (MCP_URL)
// and over stdio (it launches `bikaroo-mcp stdio` itself). Exit codes: 0 ok, 5 tool error.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BIKE_TEMPLATE, CATALOG_URI, OTHER_REGION, PROCEDURE_URI, PROMPT, REGIONS_URI, STATUS_URI, VISIBLE, statusCodesOf, stdioServerParams,
} from './fleet-scenario.mjs';
import { startServer } from './serve.mjs';

const MCP_URL = process.env.MCP_URL;
if (!MCP_URL) throw new Error('MCP_URL is not set (e.g. http://127.0.0.1:PORT/mcp)');

const here = path.dirname(fileURLToPath(import.meta.url));
const LAUNCHER = path.join(here, '../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
// The inspector keeps a catalog and client state under HOME: give it a throwaway one.
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bikaroo-inspector-'));
after(() => fs.rmSync(home, { recursive: true, force: true }));

// Target arguments: the URL, or `-e K=V ... -- command args` for stdio.
function target(transport, url = MCP_URL) {
  if (transport === 'http') return [url];
  const p = stdioServerParams();
  const env = Object.entries(p.env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  return [...env, '--cwd', p.cwd, '--', p.command, ...p.args];
}

// Runs one inspector command (over HTTP to url when given); resolves {code, json, stderr}.
function inspect(transport, era, args, url = MCP_URL) {
  const argv = [LAUNCHER, '--cli', '--protocol-era', era, '--format', 'json', '-q', '--stored-auth-only', ...args];
  // The target goes last: for stdio everything after `--` is the server's command line.
  argv.splice(2, 0, ...(transport === 'http' ? target(transport, url) : []));
  if (transport === 'stdio') argv.push(...target(transport));
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { env: { ...process.env, HOME: home }, timeout: 30_000, maxBuffer: 4 << 20 },
      (err, stdout, stderr) => {
        let json = null;
        try {
          json = JSON.parse(stdout);
        } catch {
          /* left null: the assertion below shows stdout */
        }
        resolve({ code: err ? (err.code ?? 1) : 0, json, stdout, stderr });
      });
  });
}

async function ok(transport, era, args, url = MCP_URL) {
  const r = await inspect(transport, era, args, url);
  assert.equal(r.code, 0, `inspector ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout.slice(0, 1000)}\nstderr: ${r.stderr.slice(0, 2000)}`);
  assert.ok(r.json?.result, `no result in ${r.stdout.slice(0, 500)}`);
  return r.json.result;
}

describe('inspector --cli', { timeout: 5 * 60_000 }, () => {
  for (const transport of ['http', 'stdio']) {
    for (const era of ['modern', 'legacy']) {
      test(`${transport}, ${era} era: lists, calls, reads and gets the prompt`, { timeout: 90_000 }, async () => {
        const tools = await ok(transport, era, ['--method', 'tools/list']);
        assert.ok(tools.tools.some((t) => t.name === 'get_bike_status'));

        const resources = await ok(transport, era, ['--method', 'resources/list']);
        assert.deepEqual(resources.resources.map((r) => r.uri).sort(), [CATALOG_URI, PROCEDURE_URI, REGIONS_URI, STATUS_URI].sort());

        const templates = await ok(transport, era, ['--method', 'resources/templates/list']);
        assert.deepEqual(templates.resourceTemplates.map((t) => t.uriTemplate), [BIKE_TEMPLATE, 'bikaroo://cases/{caseId}']);

        const prompts = await ok(transport, era, ['--method', 'prompts/list']);
        assert.equal(prompts.prompts[0].name, PROMPT);

        const call = await ok(transport, era, ['--method', 'tools/call', '--tool-name', 'get_bike_status',
          '--tool-args-json', JSON.stringify({ bikeId: VISIBLE })]);
        assert.notEqual(call.isError, true);
        assert.equal(call.structuredContent.bikeId, VISIBLE);
        assert.equal(call.structuredContent.region, 'FR-PAR');

        const codes = await ok(transport, era, ['--method', 'resources/read', '--uri', STATUS_URI]);
        const known = statusCodesOf(codes.contents[0].text);
        assert.ok(known.includes(call.structuredContent.status), `status is none of ${known}`);

        const proc = await ok(transport, era, ['--method', 'resources/read', '--uri', PROCEDURE_URI]);
        assert.match(proc.contents[0].text, /^# Procedure: a bike is reported damaged/);

        const prompt = await ok(transport, era, ['--method', 'prompts/get', '--prompt-name', PROMPT,
          '--prompt-args', `bikeId=${VISIBLE}`, 'symptom=brakes squeal']);
        assert.match(prompt.messages[0].content.text, new RegExp(`Bike ${VISIBLE} has been reported damaged`));
        assert.match(prompt.messages[0].content.text, /brakes squeal/);

        // A bike outside the perimeter is a tool error: exit code 5.
        const other = await inspect(transport, era, ['--method', 'tools/call', '--tool-name', 'get_bike_status',
          '--tool-args-json', JSON.stringify({ bikeId: OTHER_REGION })]);
        assert.equal(other.code, 5, `exit ${other.code}: ${other.stdout.slice(0, 300)} ${other.stderr.slice(0, 300)}`);
      });
    }
  }
});

// The case workflow through the inspector. Its CLI declares the Tasks extension on every request of
// the modern era (its settings cannot turn it off), and no extension on the legacy era: there,
// asking for an inspection answers the ordinary result naming the case and its step, never a task.
describe('inspector --cli, case workflow', { timeout: 5 * 60_000 }, () => {
  let marie;
  after(async () => {
    const code = await marie?.stop();
    assert.equal(code, 0, `server exit code ${code}: ${marie?.log()}`);
  });
  const call = (era, url, name, args) => ok('http', era, ['--method', 'tools/call', '--tool-name', name,
    '--tool-args-json', JSON.stringify(args)], url);

  // An FR-PAR bike available in the demo data, used by no other e2e test.
  test('http, legacy era (no Tasks extension): request_inspection answers the case and its step', { timeout: 90_000 }, async () => {
    marie ??= await startServer('marie', 'customer-care-assistant');
    const reported = await call('legacy', marie.url, 'report_damaged_bike', { bikeId: 'VL-3125', issue: 'brake_failure' });
    assert.notEqual(reported.isError, true, JSON.stringify(reported));
    const { caseId } = reported.structuredContent;
    assert.match(caseId, /^IC-\d+$/);
    const asked = await call('legacy', marie.url, 'request_inspection', { caseId, note: 'brakes squeal' });
    assert.notEqual(asked.isError, true, JSON.stringify(asked));
    assert.equal(asked.taskId, undefined, JSON.stringify(asked));
    assert.equal(asked.structuredContent.caseId, caseId);
    assert.equal(asked.structuredContent.state, 'inspection_requested');
    const text = asked.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
    assert.ok(text.includes(caseId) && /inspection/.test(text), text);
  });
});
