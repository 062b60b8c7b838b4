// E2E: traces. An OTLP/HTTP receiver of the test's own decodes what the server exports with the
// official protocol definitions (opentelemetry-proto's messages as @opentelemetry/otlp-transformer
// 0.214.0 generated them with protobufjs, the code its exporters used), and checks names,
// attributes, parents and links: a get_bike_status, reads of several callers batched into one
// unit, refused calls, a report with its server-side confirmation, an inspection task, stdio. The
// official v2 client (@modelcontextprotocol/client) sends the caller's trace context in each
// request's _meta, as a traced host does. Then the collector down, and silent: every call
// answered, the spans that could not go counted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { rejection, slow, stop, waitForFile } from './serve.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = process.env.BIKAROO_BIN;
const RESOURCE = 'https://mcp.bikaroo.test/mcp';
const TASKS = 'io.modelcontextprotocol/tasks';
const T = { timeout: slow ? 180_000 : 60_000 };
const REQ = { timeout: slow ? 30_000 : 10_000 };
// Bikes of the demo data used by no other test: FR-PAR ones (n % 3 = 2), one of FR-LYO.
const BIKE_READ = 'VL-3401';
const BIKE_CONFIRM = 'VL-3404';
const BIKE_TASK = 'VL-3407';
const BIKE_LYON = 'VL-3400';
const BIKE_UNSAMPLED = 'VL-3410';

// The generated protobufjs module of opentelemetry-proto (collector/trace/v1 and what it uses).
const proto = createRequire(import.meta.url)(
  path.join(here, '../node_modules/@opentelemetry/otlp-transformer/build/src/generated/root.js'),
).opentelemetry.proto;
const ExportTraceServiceRequest = proto.collector.trace.v1.ExportTraceServiceRequest;
const SERVER = proto.trace.v1.Span.SpanKind.SPAN_KIND_SERVER;
const CLIENT = proto.trace.v1.Span.SpanKind.SPAN_KIND_CLIENT;
const INTERNAL = proto.trace.v1.Span.SpanKind.SPAN_KIND_INTERNAL;
const ERROR = proto.trace.v1.Status.StatusCode.STATUS_CODE_ERROR;

const hex = (b) => Buffer.from(b ?? []).toString('hex');
const value = (v) => v.stringValue ?? (v.intValue != null ? Number(v.intValue) : v.boolValue);
const attributes = (list) => Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));

// An OTLP/HTTP receiver on 127.0.0.1: decodes each export into spans. mode silent: it takes the
// connection and the body, and never answers.
function startReceiver(mode = 'ok') {
  const spans = [];
  const held = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (mode === 'silent') {
        held.push(res);
        return;
      }
      assert.equal(req.method, 'POST');
      assert.equal(req.url, '/v1/traces');
      assert.equal(req.headers['content-type'], 'application/x-protobuf');
      const msg = ExportTraceServiceRequest.decode(Buffer.concat(chunks));
      for (const rs of msg.resourceSpans) {
        const resource = attributes(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              traceState: s.traceState ?? '',
              name: s.name,
              kind: s.kind,
              start: BigInt(s.startTimeUnixNano.toString()),
              end: BigInt(s.endTimeUnixNano.toString()),
              attrs: attributes(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: hex(l.traceId), spanId: hex(l.spanId), attrs: attributes(l.attributes) })),
              status: s.status ?? {},
              flags: s.flags,
              scope: ss.scope?.name,
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
      res.end(); // an empty ExportTraceServiceResponse: everything taken
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${server.address().port}`,
    spans,
    close: () => new Promise((r) => { for (const x of held) x.destroy(); server.closeAllConnections(); server.close(r); }),
  })));
}

// A free port of 127.0.0.1 (for a listener the server binds itself).
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

// A caller's span: a W3C traceparent of a new trace (or of trace), sampled.
function callerSpan(trace = crypto.randomBytes(16).toString('hex')) {
  const span = crypto.randomBytes(8).toString('hex');
  return { trace, span, traceparent: `00-${trace}-${span}-01` };
}

// Polls until pick() returns something truthy (counted polls, not clock readings).
async function waitFor(what, pick, polls = slow ? 1200 : 400) {
  for (let i = 0; i < polls; i++) {
    const v = pick();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`waited in vain for ${what}`);
}

// Every string attribute of spans, for the personal-data checks.
const everyValue = (spans) => spans.flatMap((s) => [s.name, ...Object.values(s.attrs).map(String)]).join('\n');

describe('traces over OTLP/HTTP, decoded with the official protocol definitions', { ...T, timeout: 10 * 60_000, skip: !BIN && 'BIKAROO_BIN not set' }, () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bikaroo-e2e-traces-'));
  let as, asPort, receiver, server, url, metricsUrl;
  const children = [];

  const mint = async (sub, client, scope = 'fleet:read fleet:report') => {
    const q = new URLSearchParams({ sub, client, scope, resource: RESOURCE });
    const j = await (await fetch(`http://127.0.0.1:${asPort}/mint?${q}`)).json();
    assert.ok(j.access_token, JSON.stringify(j));
    return j.access_token;
  };

  // bikaroo-mcp serve in JWT mode with extra settings; resolves its URL.
  async function serve(name, env) {
    const ready = path.join(tmp, `${name}.port`);
    const wrapper = (process.env.BIKAROO_WRAPPER ?? '').split(' ').filter(Boolean);
    const argv = [...wrapper, BIN, 'serve'];
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env, BIKAROO_AUTH: 'jwt', BIKAROO_AUTH_ISSUER: `http://127.0.0.1:${asPort}`, BIKAROO_RESOURCE_URI: RESOURCE,
        BIKAROO_AUTH_INSECURE_LOOPBACK: '1', BIKAROO_PORT: '0', BIKAROO_LISTEN: '127.0.0.1', BIKAROO_READY_FILE: ready,
        BIKAROO_STATE_SECRET: 'e2e-traces-secret-0123456789abcdef', ...env,
      },
    });
    let tail = '';
    child.stderr.on('data', (d) => { tail = (tail + d).slice(-8192); });
    children.push(child);
    return { child, url: `http://127.0.0.1:${await waitForFile(ready, child, name, () => tail)}/mcp`, log: () => tail };
  }

  // A v2 client pinned to 2026-07-28 as sub through app. answer: the elicitation it gives.
  async function connect(target, sub, app, { answer = null, scope } = {}) {
    const token = await mint(sub, app, scope);
    const client = new Client({ name: 'bikaroo-e2e-traces', version: '1.0.0' }, {
      versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: 10_000 } },
      capabilities: answer ? { elicitation: { form: {} } } : {},
    });
    if (answer) client.setRequestHandler('elicitation/create', async () => answer);
    await client.connect(new StreamableHTTPClientTransport(new URL(target), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }), REQ);
    return client;
  }

  // One JSON-RPC request at 2026-07-28 over plain fetch: its answer (the JSON body).
  async function rpc(token, method, params, { headers = {}, extensions, target = url } = {}) {
    const body = {
      jsonrpc: '2.0', id: crypto.randomInt(1e9), method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': extensions ? { extensions } : {},
          ...params._meta,
        },
      },
    };
    const name = params.name ?? params.uri ?? params.taskId;
    const res = await fetch(target, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}`,
        'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(name && { 'Mcp-Name': name }), ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  }

  const inTrace = (trace) => receiver.spans.filter((s) => s.traceId === trace);
  const serverSpans = (trace, name) => inTrace(trace).filter((s) => s.kind === SERVER && (!name || s.name === name));

  before(async () => {
    const asLog = path.join(process.env.IT_TMP ?? tmp, 'as-e2e-traces.log');
    const fd = fs.openSync(asLog, 'w');
    as = spawn(process.execPath, [path.join(here, '../auth/as.mjs'), '--ready', path.join(tmp, 'as.port'), '--resource', RESOURCE],
      { stdio: ['ignore', 'ignore', fd] });
    fs.closeSync(fd);
    asPort = await waitForFile(path.join(tmp, 'as.port'), as, 'the authorization server', () => fs.readFileSync(asLog, 'utf8').slice(-4096));
    receiver = await startReceiver();
    const metrics = await freePort();
    metricsUrl = `http://127.0.0.1:${metrics}/metrics`;
    // One loop and one connection: concurrent reads gather into batches.
    ({ child: server, url } = await serve('traced', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'bikaroo-e2e',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e', BIKAROO_THREADS: '1', BIKAROO_DB_CONNECTIONS: '1',
      BIKAROO_METRICS_LISTEN: `127.0.0.1:${metrics}`,
    }));
  }, { timeout: 150_000 });

  after(async () => {
    for (const c of children) assert.equal(await stop(c), 0, 'a server did not stop cleanly');
    await stop(as);
    await receiver?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }, T);

  test('a get_bike_status continues the caller\'s trace: its span, the token\'s check and its database unit inside', T, async () => {
    const caller = callerSpan();
    const client = await connect(url, 'marie', 'customer-care-assistant');
    try {
      const r = await client.callTool({
        name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: caller.traceparent, tracestate: 'bk=e2e' },
      }, REQ);
      assert.notEqual(r.isError, true, JSON.stringify(r));
    } finally {
      await client.close();
    }
    const call = await waitFor('the call\'s server span', () => serverSpans(caller.trace, 'tools/call get_bike_status')[0]);
    assert.equal(call.parentSpanId, caller.span, 'parented on the caller\'s span from _meta');
    assert.equal(call.traceState, 'bk=e2e');
    assert.equal(call.flags & 0x3ff, 0x301, 'sampled, its parent remote');
    assert.equal(call.scope, 'bikaroo-mcp');
    assert.equal(call.resource['service.name'], 'bikaroo-e2e');
    assert.equal(call.resource['deployment.environment.name'], 'e2e');
    assert.deepEqual(
      Object.fromEntries(['mcp.method.name', 'gen_ai.tool.name', 'gen_ai.operation.name', 'mcp.protocol.version', 'network.transport',
        'network.protocol.name', 'bikaroo.outcome', 'http.response.status_code'].map((k) => [k, call.attrs[k]])),
      {
        'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'get_bike_status', 'gen_ai.operation.name': 'execute_tool',
        'mcp.protocol.version': '2026-07-28', 'network.transport': 'tcp', 'network.protocol.name': 'http', 'bikaroo.outcome': 'ok',
        'http.response.status_code': 200,
      },
    );
    assert.match(call.attrs['jsonrpc.request.id'], /^\d+$/);
    assert.equal(call.attrs['error.type'], undefined);
    assert.notEqual(call.status.code, ERROR);
    // The token's check, inside the call's span.
    const authorize = inTrace(caller.trace).find((s) => s.name === 'authorize');
    assert.ok(authorize, JSON.stringify(inTrace(caller.trace).map((s) => s.name)));
    assert.equal(authorize.kind, INTERNAL);
    assert.equal(authorize.parentSpanId, call.spanId);
    assert.ok(authorize.start >= call.start && authorize.end <= call.end);
    // Its database unit: a child in its trace, and linked from the call.
    const unit = inTrace(caller.trace).find((s) => s.kind === CLIENT && s.attrs['db.system.name'] === 'postgresql');
    assert.ok(unit, JSON.stringify(inTrace(caller.trace).map((s) => s.name)));
    assert.equal(unit.parentSpanId, call.spanId);
    // The caller's identity, then its read: one unit of two SELECTs, named by both.
    assert.match(unit.attrs['db.query.summary'], /^BATCH SELECT (fleet\.\w+ )*fleet\.act_as fleet\.bike_status_for /);
    assert.equal(unit.name, unit.attrs['db.query.summary']);
    assert.match(unit.attrs['db.query.text'], /fleet\.act_as\(\$1::text, \$2::text\).*; .*fleet\.bike_status_for\(\$1::text\[\]\)/s);
    assert.equal(typeof unit.attrs['db.namespace'], 'string');
    assert.ok(call.links.some((l) => l.spanId === unit.spanId && l.attrs['bikaroo.link'] === 'db_unit'));
    // No bike, no subject anywhere (BIKAROO_TRACE_PERSONAL_DATA is off).
    const text = everyValue(inTrace(caller.trace));
    assert.ok(!text.includes(BIKE_READ) && !text.includes('marie'), text);
    // The audit row and the spans carry one trace id.
    const audit = execFileSync('psql', ['-X', '-qtA', process.env.IT_SUPER_URL, '-c',
      `SELECT trace_id FROM fleet.audit_log WHERE target = '${BIKE_READ}' ORDER BY audit_id DESC LIMIT 1`], { encoding: 'utf8' }).trim();
    assert.equal(audit, caller.trace);
    // mcp.server.operation.duration, as the conventions name and bucket it.
    const m = await (await fetch(metricsUrl)).text();
    assert.match(m, /mcp_server_operation_duration_seconds_bucket\{mcp_method_name="tools\/call",gen_ai_tool_name="get_bike_status",gen_ai_prompt_name="",gen_ai_operation_name="execute_tool",error_type="",rpc_response_status_code="",network_transport="tcp",mcp_protocol_version="2026-07-28",le="0.01"\} \d+/);
    assert.match(m, /le="300"\}/);
  });

  test('the HTTP traceparent parents a message without one in _meta; with both, _meta parents and the header is a link', T, async () => {
    const token = await mint('marie', 'customer-care-assistant');
    const header = callerSpan();
    let r = await rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } }, { headers: { traceparent: header.traceparent } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const alone = await waitFor('the span of the header\'s trace', () => serverSpans(header.trace)[0]);
    assert.equal(alone.parentSpanId, header.span);
    assert.deepEqual(alone.links.filter((l) => l.attrs['bikaroo.link'] === 'transport'), []);
    const both = callerSpan();
    const http2 = callerSpan();
    r = await rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: both.traceparent } },
      { headers: { traceparent: http2.traceparent } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const span = await waitFor('the span of the _meta trace', () => serverSpans(both.trace)[0]);
    assert.equal(span.parentSpanId, both.span);
    const link = span.links.find((l) => l.attrs['bikaroo.link'] === 'transport');
    assert.deepEqual({ traceId: link?.traceId, spanId: link?.spanId }, { traceId: http2.trace, spanId: http2.span });
    assert.deepEqual(serverSpans(http2.trace), [], 'nothing in the header\'s trace');
    // A malformed traceparent in _meta is ignored: the header's context parents.
    const fallback = callerSpan();
    r = await rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: '00-zz' } },
      { headers: { traceparent: fallback.traceparent } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await waitFor('the fallback span', () => serverSpans(fallback.trace)[0])).parentSpanId, fallback.span);
  });

  test('resources/read: a document\'s URI is its mcp.resource.uri, an object\'s URI (it names a bike) is not in the span', T, async () => {
    const token = await mint('marie', 'customer-care-assistant');
    const doc = callerSpan();
    let r = await rpc(token, 'resources/read', { uri: 'bikaroo://fleet/status-codes', _meta: { traceparent: doc.traceparent } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const docSpan = await waitFor('the document read\'s span', () => serverSpans(doc.trace, 'resources/read')[0]);
    assert.equal(docSpan.attrs['mcp.resource.uri'], 'bikaroo://fleet/status-codes');
    const bike = callerSpan();
    r = await rpc(token, 'resources/read', { uri: `bikaroo://fleet/bikes/${BIKE_READ}`, _meta: { traceparent: bike.traceparent } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const bikeSpan = await waitFor('the object read\'s span', () => serverSpans(bike.trace, 'resources/read')[0]);
    assert.equal(bikeSpan.attrs['mcp.resource.uri'], undefined);
    assert.equal(bikeSpan.attrs['bikaroo.target'], 'bikaroo://fleet/bikes/{bikeId}', 'the template, which names no bike');
    assert.ok(!everyValue(inTrace(bike.trace)).includes(BIKE_READ), everyValue(inTrace(bike.trace)));
  });

  test('reads of several callers batched into one unit: one span, linked from each call\'s span', T, async () => {
    const callers = ['marie', 'olivia', 'nadia'];
    const tokens = await Promise.all(callers.map((c) => mint(c, 'ops-assistant')));
    let unit = null;
    let sent = [];
    // Concurrent calls gather while the loop's one connection is busy; tried a few times, as
    // whether two callers meet in one batch is the load's doing.
    for (let round = 0; round < 10 && !unit; round++) {
      sent = [];
      await Promise.all(Array.from({ length: 30 }, (_, i) => {
        const c = callerSpan();
        sent.push(c);
        return rpc(tokens[i % 3], 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: c.traceparent } })
          .then((r) => assert.equal(r.status, 200, JSON.stringify(r.body)));
      }));
      const traces = new Set(sent.map((c) => c.trace));
      await waitFor('the calls\' spans', () => receiver.spans.filter((s) => s.kind === SERVER && traces.has(s.traceId)).length === 30);
      unit = receiver.spans.find((s) => s.kind === CLIENT && traces.has(s.traceId) && s.attrs['bikaroo.db.calls'] >= 2);
    }
    assert.ok(unit, 'no unit served two callers in ten rounds of 30 concurrent calls');
    assert.match(unit.name, /^BATCH SELECT (fleet\.\w+ )*fleet\.act_as fleet\.bike_status_for /);
    // Its statements: each caller's identity, then its read (a caller's calls share both).
    assert.ok(unit.attrs['db.operation.batch.size'] >= 2, JSON.stringify(unit.attrs));
    const linking = receiver.spans.filter((s) => s.kind === SERVER && s.links.some((l) => l.spanId === unit.spanId && l.traceId === unit.traceId));
    assert.equal(linking.length, unit.attrs['bikaroo.db.calls'], 'every call it served links to it');
    assert.ok(new Set(linking.map((s) => s.traceId)).size >= 2, 'calls of several traces share it');
    const parent = linking.find((s) => s.spanId === unit.parentSpanId);
    assert.ok(parent, 'its parent is one of the calls it served');
    assert.equal(parent.traceId, unit.traceId);
    assert.equal(receiver.spans.filter((s) => s.spanId === unit.spanId).length, 1, 'one span for the unit');
  });

  test('calls not sampled: nothing of them exported, not even from the units they share, yet their trace id in the access line, the audit row and the histogram', T, async () => {
    // Parent-based, new traces at ratio 0: a call with no context, or a caller's context not
    // sampled (in _meta or in the header), is not sampled; a sampled caller's is.
    const metrics = await freePort();
    const { child, url: target, log } = await serve('unsampled', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0', BIKAROO_THREADS: '1', BIKAROO_DB_CONNECTIONS: '1', BIKAROO_METRICS_LISTEN: `127.0.0.1:${metrics}`,
    });
    try {
      const token = await mint('marie', 'customer-care-assistant');
      const call = (params, headers) => rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_UNSAMPLED }, ...params }, { headers, target })
        .then((r) => { assert.equal(r.status, 200, JSON.stringify(r.body)); assert.equal(r.body.result?.structuredContent?.bikeId, BIKE_UNSAMPLED); });
      const audited = () => execFileSync('psql', ['-X', '-qtA', process.env.IT_SUPER_URL, '-c',
        `SELECT trace_id FROM fleet.audit_log WHERE target = '${BIKE_UNSAMPLED}' ORDER BY audit_id DESC LIMIT 1`], { encoding: 'utf8' }).trim();
      // No context at all: a new trace, made by the server, not sampled.
      await call({});
      const made = audited();
      assert.match(made, /^[0-9a-f]{32}$/);
      // A caller's context not sampled, in _meta (over a sampled header: _meta decides) or in
      // the header; unsampled and sampled calls at once, so that they share database units.
      const quiet = Array.from({ length: 12 }, () => ({ ...callerSpan(), header: callerSpan() }));
      for (const q of quiet) q.traceparent = q.traceparent.replace(/-01$/, '-00');
      const loud = Array.from({ length: 4 }, () => callerSpan());
      await Promise.all([
        ...quiet.map((q, i) => (i % 2 ? call({ _meta: { traceparent: q.traceparent } }, { traceparent: q.header.traceparent })
          : call({}, { traceparent: q.traceparent }))),
        ...loud.map((c) => call({ _meta: { traceparent: c.traceparent } })),
      ]);
      // Then one more sampled call: spans leave in the order they end, so once its span is in,
      // anything the calls before it ended would be too.
      const marker = callerSpan();
      await call({ _meta: { traceparent: marker.traceparent } });
      await waitFor('the last call\'s span', () => serverSpans(marker.trace)[0]);
      const unsampled = new Set([made, ...quiet.map((q) => q.trace), ...quiet.filter((_, i) => i % 2).map((q) => q.header.trace)]);
      const leaked = receiver.spans.filter((x) => unsampled.has(x.traceId) || x.links.some((l) => unsampled.has(l.traceId)));
      assert.deepEqual(leaked.map((x) => `${x.name} ${x.traceId}`), [], 'nothing of a call not sampled is exported');
      for (const c of loud) assert.equal(serverSpans(c.trace)[0].parentSpanId, c.span);
      // Each call keeps its trace id where an operator looks: its access line and its audit row.
      const rows = execFileSync('psql', ['-X', '-qtA', process.env.IT_SUPER_URL, '-c',
        `SELECT trace_id FROM fleet.audit_log WHERE target = '${BIKE_UNSAMPLED}'`], { encoding: 'utf8' }).split('\n');
      for (const t of unsampled) {
        if (quiet.some((q) => q.header.trace === t)) continue; // a header under a _meta context: not the call's trace
        assert.ok(rows.includes(t), `the audit row of trace ${t}`);
        assert.match(log(), new RegExp(`access .*trace=${t}`), `the access line of trace ${t}`);
      }
      // mcp.server.operation.duration counts every call, sampled or not.
      const m = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      const count = m.match(/mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="get_bike_status",[^}]*\} (\d+)/);
      assert.equal(Number(count?.[1]), 2 + quiet.length + loud.length, m.split('\n').filter((l) => l.startsWith('mcp_server')).join('\n'));
    } finally {
      assert.equal(await stop(child), 0, 'the server stops cleanly');
      children.splice(children.indexOf(child), 1);
    }
  });

  test('refused calls: a bike out of the caller\'s regions is a tool_error, a missing scope a -32602 with its 403', T, async () => {
    const caller = callerSpan();
    const client = await connect(url, 'marie', 'customer-care-assistant');
    try {
      const r = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: BIKE_LYON }, _meta: { traceparent: caller.traceparent } }, REQ);
      assert.equal(r.isError, true);
    } finally {
      await client.close();
    }
    const refused = await waitFor('the refused call\'s span', () => serverSpans(caller.trace, 'tools/call get_bike_status')[0]);
    assert.equal(refused.attrs['error.type'], 'tool_error');
    assert.equal(refused.attrs['rpc.response.status_code'], undefined);
    assert.equal(refused.status.code, ERROR);
    assert.equal(refused.status.message ?? '', '', 'a tool\'s words are not the span\'s');
    assert.ok(!everyValue(inTrace(caller.trace)).includes(BIKE_LYON));

    const scoped = callerSpan();
    const reader = await connect(url, 'marie', 'customer-care-assistant', { scope: 'fleet:read' });
    try {
      const err = await rejection(reader.callTool({
        name: 'report_damaged_bike', arguments: { bikeId: BIKE_READ, issue: 'flat_tire' }, _meta: { traceparent: scoped.traceparent },
      }, REQ));
      assert.ok(err, 'refused');
    } finally {
      await reader.close();
    }
    const denied = await waitFor('the denied call\'s span', () => serverSpans(scoped.trace, 'tools/call report_damaged_bike')[0]);
    assert.equal(denied.attrs['rpc.response.status_code'], '-32602');
    assert.equal(denied.attrs['error.type'], '-32602');
    assert.equal(denied.attrs['http.response.status_code'], 403);
    assert.equal(denied.status.code, ERROR);
    assert.equal(denied.status.message, 'Insufficient scope');
    const m = await (await fetch(metricsUrl)).text();
    assert.match(m, /mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="report_damaged_bike",gen_ai_prompt_name="",gen_ai_operation_name="execute_tool",error_type="-32602",rpc_response_status_code="-32602",network_transport="tcp",mcp_protocol_version="2026-07-28"\} [1-9]/);
    assert.match(m, /error_type="tool_error",rpc_response_status_code=""/);
  });

  test('a report with its server-side confirmation: both messages in the caller\'s trace, the retry linked to the ask, the round trip inside', T, async () => {
    const caller = callerSpan();
    const client = await connect(url, 'marie', 'careful-assistant', { answer: { action: 'accept', content: { confirm: true } } });
    try {
      const r = await client.callTool({
        name: 'report_damaged_bike', arguments: { bikeId: BIKE_CONFIRM, issue: 'flat_tire' }, _meta: { traceparent: caller.traceparent },
      }, REQ);
      assert.notEqual(r.isError, true, JSON.stringify(r));
    } finally {
      await client.close();
    }
    const [ask, retry] = await waitFor('both messages\' spans', () => {
      const s = serverSpans(caller.trace, 'tools/call report_damaged_bike').sort((a, b) => (a.start < b.start ? -1 : 1));
      return s.length === 2 && s;
    });
    for (const s of [ask, retry]) assert.equal(s.parentSpanId, caller.span);
    assert.equal(ask.attrs['bikaroo.outcome'], 'input_required');
    assert.equal(retry.attrs['bikaroo.outcome'], 'ok');
    assert.ok(retry.links.some((l) => l.spanId === ask.spanId && l.attrs['bikaroo.link'] === 'input_request'));
    const trip = inTrace(caller.trace).find((s) => s.name === 'input round trip');
    assert.ok(trip, JSON.stringify(inTrace(caller.trace).map((s) => s.name)));
    assert.equal(trip.parentSpanId, retry.spanId);
    assert.ok(trip.start <= ask.end && trip.end >= retry.start, 'it spans from the ask to the retry');
    // Each message has its token check and its database work inside.
    for (const s of [ask, retry]) {
      const inside = inTrace(caller.trace).filter((x) => x.parentSpanId === s.spanId);
      assert.ok(inside.some((x) => x.name === 'authorize'), JSON.stringify(inside.map((x) => x.name)));
      assert.ok(inside.some((x) => x.kind === CLIENT && x.attrs['db.system.name'] === 'postgresql'), JSON.stringify(inside.map((x) => x.name)));
    }
    assert.ok(!everyValue(inTrace(caller.trace)).includes(BIKE_CONFIRM));
  });

  test('an inspection asked as a task: the call and the task\'s polls in the caller\'s trace', T, async () => {
    const token = await mint('marie', 'customer-care-assistant');
    const reported = await rpc(token, 'tools/call', { name: 'report_damaged_bike', arguments: { bikeId: BIKE_TASK, issue: 'brake_failure' } });
    const caseId = reported.body.result?.structuredContent?.caseId;
    assert.ok(caseId, JSON.stringify(reported.body));
    const caller = callerSpan();
    const created = await rpc(token, 'tools/call', {
      name: 'request_inspection', arguments: { caseId, note: 'brakes squeal' }, _meta: { traceparent: caller.traceparent },
    }, { extensions: { [TASKS]: {} } });
    assert.equal(created.body.result?.resultType, 'task', JSON.stringify(created.body));
    const poll = callerSpan(caller.trace);
    const got = await rpc(token, 'tasks/get', { taskId: created.body.result.taskId, _meta: { traceparent: poll.traceparent } },
      { extensions: { [TASKS]: {} } });
    assert.equal(got.body.result?.status, 'working', JSON.stringify(got.body));
    const call = await waitFor('the task\'s call', () => serverSpans(caller.trace, 'tools/call request_inspection')[0]);
    const get = await waitFor('the task\'s poll', () => serverSpans(caller.trace, 'tasks/get')[0]);
    assert.equal(call.parentSpanId, caller.span);
    assert.equal(get.parentSpanId, poll.span);
    assert.equal(get.attrs['mcp.method.name'], 'tasks/get');
    for (const s of [call, get]) {
      assert.ok(inTrace(caller.trace).some((x) => x.parentSpanId === s.spanId && x.kind === CLIENT),
        `${s.name}: its database unit inside`);
    }
  });

  test('stdio: the caller\'s _meta traceparent continues in the span of a pipe', T, async () => {
    const caller = callerSpan();
    const wrapper = (process.env.BIKAROO_WRAPPER ?? '').split(' ').filter(Boolean);
    const argv = [...wrapper, BIN, 'stdio'];
    const transport = new StdioClientTransport({
      command: argv[0], args: argv.slice(1), stderr: 'ignore',
      env: { ...process.env, BIKAROO_AUTH: 'local', BIKAROO_LOCAL_SUBJECT: 'marie', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
    });
    const client = new Client({ name: 'bikaroo-e2e-traces', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(transport, REQ);
    try {
      const r = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: caller.traceparent } }, REQ);
      assert.notEqual(r.isError, true, JSON.stringify(r));
    } finally {
      await client.close(); // EOF: the server sends what waits, then exits
    }
    const span = await waitFor('the stdio span', () => serverSpans(caller.trace, 'tools/call get_bike_status')[0]);
    assert.equal(span.parentSpanId, caller.span);
    assert.equal(span.attrs['network.transport'], 'pipe');
    assert.ok(inTrace(caller.trace).some((x) => x.parentSpanId === span.spanId && x.kind === CLIENT));
  });

  // ---- the issuer's fetches: CLIENT spans inside the token's check, and their histogram ----

  // An authorization server of its own (format jwt or opaque), stopped with the others.
  async function startAs(name, format) {
    const ready = path.join(tmp, `${name}.port`);
    const log = path.join(process.env.IT_TMP ?? tmp, `${name}.log`);
    const fd = fs.openSync(log, 'w');
    const child = spawn(process.execPath, [path.join(here, '../auth/as.mjs'), '--ready', ready, '--resource', RESOURCE, '--format', format],
      { stdio: ['ignore', 'ignore', fd] });
    fs.closeSync(fd);
    extraAs.push(child);
    return Number(await waitFor(`${name}'s port`, () => fs.existsSync(ready) && fs.readFileSync(ready, 'utf8').trim()));
  }
  const extraAs = [];
  after(async () => { for (const c of extraAs) await stop(c); });

  // The spans of traces (ids), once n CLIENT spans of the issuer are among them.
  const issuerSpans = (traces, n) => waitFor(`${n} fetch span(s)`, () => {
    const found = receiver.spans.filter((x) => traces.includes(x.traceId) && x.kind === CLIENT && x.attrs['bikaroo.auth.fetch']);
    return found.length >= n && found;
  });
  // The HTTP client conventions' attributes of a fetch span, as an object.
  const httpAttrs = (x) => Object.fromEntries(['http.request.method', 'url.full', 'server.address', 'server.port',
    'http.response.status_code', 'error.type', 'bikaroo.auth.fetch'].map((k) => [k, x.attrs[k]]));

  // A JWT server that refreshes its key set whenever a token names a key it lacks; its URL and
  // metrics once started.
  let rotating = null;
  async function rotatingServer() {
    if (rotating) return rotating;
    const metrics = await freePort();
    const { url: target } = await serve('issuer-rotation', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', BIKAROO_THREADS: '1',
      BIKAROO_AUTH_REFRESH_SECONDS: '0', BIKAROO_METRICS_LISTEN: `127.0.0.1:${metrics}`,
    });
    // Its key set loaded before any key is rotated (a call, or its start-up's readiness check).
    const warm = await mint('marie', 'customer-care-assistant');
    assert.equal((await rpc(warm, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } }, { target })).status, 200);
    rotating = { target, metrics: `http://127.0.0.1:${metrics}/metrics` };
    return rotating;
  }
  // The issuer rotates its keys; a token signed with the new one.
  const rotatedToken = async () => {
    await fetch(`http://127.0.0.1:${asPort}/rotate`);
    return (await (await fetch(`http://127.0.0.1:${asPort}/forge?kind=valid_rotated`)).json()).access_token;
  };

  test('a key rotation: the key set\'s GET inside the call\'s authorize span, under the HTTP client conventions, and its histogram', T, async () => {
    const { target, metrics } = await rotatingServer();
    const token = await rotatedToken();
    const caller = callerSpan();
    const r = await rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } }, { headers: { traceparent: caller.traceparent }, target });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const [keys] = await issuerSpans([caller.trace], 1);
    const call = await waitFor('the call\'s span', () => serverSpans(caller.trace, 'tools/call get_bike_status')[0]);
    const authorize = inTrace(caller.trace).find((x) => x.name === 'authorize');
    assert.ok(authorize, JSON.stringify(inTrace(caller.trace).map((x) => x.name)));
    assert.equal(authorize.parentSpanId, call.spanId);
    const port = Number(asPort);
    assert.deepEqual(httpAttrs(keys), {
      'http.request.method': 'GET', 'url.full': `http://127.0.0.1:${port}/jwks`,
      'server.address': '127.0.0.1', 'server.port': port, 'http.response.status_code': 200, 'error.type': undefined,
      'bikaroo.auth.fetch': 'keys',
    });
    assert.equal(keys.name, 'GET');
    assert.equal(keys.kind, CLIENT);
    assert.equal(keys.traceId, caller.trace, 'in the call\'s trace');
    assert.equal(keys.parentSpanId, authorize.spanId, 'a child of the token\'s check');
    assert.ok(keys.start >= authorize.start && keys.end <= authorize.end && authorize.end <= call.end);
    assert.notEqual(keys.status.code, ERROR);
    assert.ok(!everyValue(receiver.spans).includes(token), 'no token in any span');
    // http.client.request.duration, named and bucketed as the conventions say, beside mcp's:
    // this fetch and the start-up's (the readiness check's key set, traced or not).
    const m = await (await fetch(metrics)).text();
    const series = `http_client_request_duration_seconds_bucket{http_request_method="GET",server_address="127.0.0.1",server_port="${asPort}",http_response_status_code="200",error_type=""`;
    assert.ok(m.includes(`${series},le="0.005"}`) && m.includes(`${series},le="7.5"}`), m.split('\n').filter((l) => l.startsWith('http_client')).join('\n'));
    assert.match(m, new RegExp(`http_client_request_duration_seconds_count\\{http_request_method="GET",server_address="127\\.0\\.0\\.1",server_port="${asPort}",http_response_status_code="200",error_type=""\\} [2-9]\\n`));
    assert.match(m, /# TYPE http_client_request_duration_seconds histogram/);
    assert.match(m, /mcp_server_operation_duration_seconds_bucket/);
  });

  test('a message whose _meta names another trace than its request: its authorize span links to the fetch, left in the request\'s trace', T, async () => {
    const { target } = await rotatingServer();
    const token = await rotatedToken();
    const caller = callerSpan();
    const r = await rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: caller.traceparent } }, { target });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const authorize = await waitFor('the authorize span', () => inTrace(caller.trace).find((x) => x.name === 'authorize'));
    assert.equal(authorize.parentSpanId, serverSpans(caller.trace)[0].spanId);
    const moved = authorize.links.filter((l) => l.attrs['bikaroo.link'] === 'moved');
    assert.equal(moved.length, 1, JSON.stringify(authorize.links));
    const keys = await waitFor('the fetch span', () => receiver.spans.find((x) => x.spanId === moved[0].spanId && x.traceId === moved[0].traceId));
    assert.notEqual(keys.traceId, caller.trace);
    assert.equal(keys.parentSpanId, '', 'no traceparent header: a root of the request\'s own trace');
    assert.equal(keys.kind, CLIENT);
    assert.equal(keys.attrs['bikaroo.auth.fetch'], 'keys');
  });

  test('calls that waited on one fetch of the key set: one GET span, a child of the call that ran it, linked from the others', T, async () => {
    const { target } = await rotatingServer();
    await fetch(`http://127.0.0.1:${asPort}/rotate`);
    const forge = async () => (await (await fetch(`http://127.0.0.1:${asPort}/forge?kind=valid_rotated`)).json()).access_token;
    const tokens = [await forge(), await forge(), await forge()];
    const jwks0 = (await (await fetch(`http://127.0.0.1:${asPort}/stats`)).json()).jwks;
    await fetch(`http://127.0.0.1:${asPort}/slow?path=/jwks&ms=1500`);
    const callers = tokens.map(() => callerSpan());
    try {
      const answers = await Promise.all(tokens.map((t, i) => rpc(t, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } },
        { headers: { traceparent: callers[i].traceparent }, target })));
      for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
    } finally {
      await fetch(`http://127.0.0.1:${asPort}/slow?path=/jwks&ms=0`);
    }
    assert.equal((await (await fetch(`http://127.0.0.1:${asPort}/stats`)).json()).jwks - jwks0, 1, 'one fetch for the three calls');
    const traces = callers.map((c) => c.trace);
    const [fetchSpan] = await issuerSpans(traces, 1);
    const checks = await waitFor('three authorize spans', () => {
      const a = receiver.spans.filter((x) => traces.includes(x.traceId) && x.name === 'authorize');
      return a.length === 3 && a;
    });
    assert.equal(receiver.spans.filter((x) => traces.includes(x.traceId) && x.attrs['bikaroo.auth.fetch']).length, 1);
    const runner = checks.find((x) => x.spanId === fetchSpan.parentSpanId);
    assert.ok(runner, 'the fetch is a child of the check that ran it');
    assert.equal(runner.traceId, fetchSpan.traceId);
    for (const waiter of checks.filter((x) => x !== runner)) {
      const link = waiter.links.find((l) => l.attrs['bikaroo.link'] === 'waited');
      assert.deepEqual({ traceId: link?.traceId, spanId: link?.spanId }, { traceId: fetchSpan.traceId, spanId: fetchSpan.spanId },
        'a call that waited on the fetch links to it');
      assert.ok(waiter.end - waiter.start > 1_000_000_000n, 'its check lasted the fetch');
    }
  });

  test('introspection: the metadata GET and the POST inside the check, never the token, the client secret or the form; a refused token\'s check on its own; a timeout', T, async () => {
    const opaquePort = await startAs('as-opaque', 'opaque');
    const metrics = await freePort();
    const { url: target } = await serve('introspecting', {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100', BIKAROO_THREADS: '1',
      BIKAROO_AUTH_TIMEOUT_MS: '1000', BIKAROO_METRICS_LISTEN: `127.0.0.1:${metrics}`,
      BIKAROO_AUTH: 'introspection', BIKAROO_AUTH_ISSUER: `http://127.0.0.1:${opaquePort}`,
      BIKAROO_AUTH_CLIENT_ID: 'bikaroo-mcp', BIKAROO_AUTH_CLIENT_SECRET: 'bikaroo-mcp-secret',
    });
    const q = new URLSearchParams({ sub: 'marie', client: 'customer-care-assistant', scope: 'fleet:read', resource: RESOURCE });
    const token = (await (await fetch(`http://127.0.0.1:${opaquePort}/mint?${q}`)).json()).access_token;
    assert.ok(token);
    const caller = callerSpan();
    let r = await rpc(token, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } }, { headers: { traceparent: caller.traceparent }, target });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    // The first call discovers the issuer (its RFC 8414 metadata), then asks about the token.
    await waitFor('the introspection\'s span', () => inTrace(caller.trace).some((x) => x.name === 'POST'));
    const fetches = inTrace(caller.trace).filter((x) => x.kind === CLIENT && x.attrs['bikaroo.auth.fetch']).sort((a, b) => Number(a.start - b.start));
    assert.equal(fetches.length, 2, JSON.stringify(fetches.map((x) => [x.name, x.attrs['url.full'], x.attrs['http.response.status_code']])));
    const [meta, post] = fetches;
    const authorize = inTrace(caller.trace).find((x) => x.name === 'authorize');
    const base = { 'server.address': '127.0.0.1', 'server.port': opaquePort, 'http.response.status_code': 200, 'error.type': undefined };
    assert.deepEqual(httpAttrs(meta), {
      ...base, 'http.request.method': 'GET', 'url.full': `http://127.0.0.1:${opaquePort}/.well-known/oauth-authorization-server`,
      'bikaroo.auth.fetch': 'metadata',
    });
    assert.deepEqual(httpAttrs(post), {
      ...base, 'http.request.method': 'POST', 'url.full': `http://127.0.0.1:${opaquePort}/token/introspection`,
      'bikaroo.auth.fetch': 'introspection',
    });
    for (const f of [meta, post]) {
      assert.equal(f.name, f.attrs['http.request.method']);
      assert.equal(f.parentSpanId, authorize.spanId);
      assert.equal(f.traceId, caller.trace);
      assert.notEqual(f.status.code, ERROR);
    }
    // A token the issuer does not know: refused (401) before any message is read; its check is
    // still in its request's trace, failed, with the introspection inside.
    const bogus = `opaque-${crypto.randomBytes(24).toString('base64url')}`;
    const refused = callerSpan();
    r = await rpc(bogus, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } }, { headers: { traceparent: refused.traceparent }, target });
    assert.equal(r.status, 401);
    const [denied] = await issuerSpans([refused.trace], 1);
    const deniedCheck = await waitFor('the refused check', () => inTrace(refused.trace).find((x) => x.name === 'authorize'));
    assert.equal(deniedCheck.parentSpanId, refused.span);
    assert.equal(deniedCheck.status.code, ERROR);
    assert.equal(denied.parentSpanId, deniedCheck.spanId);
    assert.equal(denied.attrs['bikaroo.auth.fetch'], 'introspection');
    // The issuer too slow: the call is answered 503, its check's POST says timeout, failed.
    await fetch(`http://127.0.0.1:${opaquePort}/slow?path=/token/introspection&ms=2500`);
    const late = callerSpan();
    const lateToken = (await (await fetch(`http://127.0.0.1:${opaquePort}/mint?${q}`)).json()).access_token;
    try {
      r = await rpc(lateToken, 'tools/call', { name: 'get_bike_status', arguments: { bikeId: BIKE_READ } }, { headers: { traceparent: late.traceparent }, target });
    } finally {
      await fetch(`http://127.0.0.1:${opaquePort}/slow?path=/token/introspection&ms=0`);
    }
    assert.equal(r.status, 503);
    const [timedOut] = await issuerSpans([late.trace], 1);
    assert.equal(timedOut.attrs['error.type'], 'timeout');
    assert.equal(timedOut.attrs['http.response.status_code'], undefined);
    assert.equal(timedOut.status.code, ERROR);
    const m = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
    assert.ok(m.includes(`http_client_request_duration_seconds_count{http_request_method="POST",server_address="127.0.0.1",server_port="${opaquePort}",http_response_status_code="",error_type="timeout"} 1\n`),
      m.split('\n').filter((l) => l.startsWith('http_client') && l.includes('_count')).join('\n'));
    // Nothing secret in any span: names, attributes, links, statuses.
    const all = JSON.stringify(receiver.spans, (k, v) => (typeof v === 'bigint' ? String(v) : v));
    for (const secret of [token, bogus, lateToken, 'bikaroo-mcp-secret', encodeURIComponent(token), 'token_type_hint', 'token=']) {
      assert.ok(!all.includes(secret), `${secret} in an exported span`);
    }
  });

  // Every call answered by a server whose collector fails (env); what could not go is counted
  // (metric, a regular expression of its series).
  async function unaffected(env, metric) {
    const metrics = await freePort();
    const { child, url: target } = await serve(`collector-${metrics}`, {
      ...env, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_BSP_MAX_QUEUE_SIZE: '64', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64',
      BIKAROO_METRICS_LISTEN: `127.0.0.1:${metrics}`, BIKAROO_DRAIN_MS: '1000',
    });
    const token = await mint('marie', 'customer-care-assistant');
    for (let round = 0; round < 4; round++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => rpc(token, 'tools/call',
        { name: 'get_bike_status', arguments: { bikeId: BIKE_READ }, _meta: { traceparent: callerSpan().traceparent } }, { target })));
      for (const a of answers) {
        assert.equal(a.status, 200, JSON.stringify(a.body));
        assert.equal(a.body.result?.structuredContent?.bikeId, BIKE_READ);
      }
    }
    let m = '';
    for (let i = 0; i < (slow ? 600 : 200) && !new RegExp(`${metric} [1-9]`).test(m); i++) {
      if (i) await new Promise((r) => setTimeout(r, 50));
      m = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
    }
    assert.match(m, new RegExp(`${metric} [1-9]`), m.split('\n').filter((l) => l.startsWith('otel_')).join('\n'));
    assert.equal(await stop(child), 0, 'the server stops cleanly whatever its collector does');
    children.splice(children.indexOf(child), 1);
  }

  test('the collector down: calls answered, the failed exports counted', T, async () => {
    const closed = await freePort();
    await unaffected({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${closed}/v1/traces` },
      'otel_sdk_exporter_span_exported_total\\{error_type="unreachable"\\}');
  });

  test('the collector silent: calls answered, the spans past the queue dropped and counted', T, async () => {
    const silent = await startReceiver('silent');
    try {
      await unaffected({ OTEL_EXPORTER_OTLP_ENDPOINT: silent.url, OTEL_EXPORTER_OTLP_TIMEOUT: '60000' },
        'otel_sdk_processor_span_processed_total\\{error_type="queue_full"\\}');
    } finally {
      await silent.close();
    }
  });
});
