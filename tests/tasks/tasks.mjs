// The Tasks extension end to end against the conformance server, where the official suite does
// not look: notifications/tasks on a subscriptions/listen stream (HTTP and stdio), each one the
// DetailedTask that tasks/get answers, and the refusals around it.
// Usage: node tasks.mjs HTTP_URL CONFORMANCE_SERVER_BINARY; prints `ok - ...` / `not ok - ...`.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

const [url, binary] = process.argv.slice(2);
const EXT = 'io.modelcontextprotocol/tasks';
const declared = { extensions: { [EXT]: {} }, elicitation: {} };
let failures = 0;
let nextId = 1;

function report(ok, what, why) {
  if (ok) console.log(`ok - ${what}`);
  else {
    failures++;
    console.log(`not ok - ${what}${why ? `: ${why}` : ''}`);
  }
}

function message(method, params, caps, id = nextId++) {
  return {
    jsonrpc: '2.0', id, method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': caps } },
  };
}

function headers(method, name) {
  return {
    'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method,
    ...(name ? { 'Mcp-Name': name } : {}),
  };
}

// One request over HTTP: {status, body}.
async function post(method, params, caps = declared) {
  const name = params.name ?? params.taskId;
  const res = await fetch(url, { method: 'POST', headers: headers(method, name),
    body: JSON.stringify(message(method, params, caps)), signal: AbortSignal.timeout(15000) });
  const text = await res.text();
  const body = text.startsWith('{') ? JSON.parse(text)
    : JSON.parse(text.split('\n').filter((l) => l.startsWith('data:')).pop().slice(5));
  return { status: res.status, body };
}

// A listen stream over HTTP: its messages as they come (next(pred) waits for one), close().
async function listen(filter, caps = declared) {
  const ctl = new AbortController();
  const res = await fetch(url, { method: 'POST', headers: headers('subscriptions/listen'),
    body: JSON.stringify(message('subscriptions/listen', { notifications: filter }, caps, 'l-1')),
    signal: ctl.signal });
  if (!res.headers.get('content-type')?.includes('text/event-stream')) {
    const body = await res.json();
    return { status: res.status, body };
  }
  const seen = [];
  let wake = () => {};
  (async () => {
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of res.body) {
        buf += decoder.decode(chunk, { stream: true });
        const lines = buf.split('\n');
        buf = lines.pop();
        for (const l of lines) if (l.startsWith('data:')) seen.push(JSON.parse(l.slice(5)));
        wake();
      }
    } catch { /* closed */ }
  })();
  return {
    status: res.status,
    seen,
    async next(pred, ms = 15000) {
      const until = Date.now() + ms;
      for (;;) {
        const i = seen.findIndex(pred);
        if (i >= 0) return seen.splice(i, 1)[0];
        if (Date.now() > until) throw new Error(`nothing came in ${ms} ms; seen ${JSON.stringify(seen)}`);
        await new Promise((r) => { wake = r; setTimeout(r, 200); });
      }
    },
    close: () => ctl.abort(),
  };
}

const isTask = (id, status) => (m) => m.method === 'notifications/tasks' && m.params?.taskId === id &&
  (!status || m.params.status === status);

// What tasks/get answers, as a notification carries it (no resultType, no _meta).
async function detail(taskId) {
  const r = (await post('tasks/get', { taskId })).body.result;
  delete r.resultType;
  delete r._meta;
  return r;
}

async function test(what, fn) {
  try {
    await fn();
  } catch (e) {
    report(false, what, e.message);
  }
}

await test('a listen naming a task hears it complete, with the result tasks/get answers', async () => {
  const created = (await post('tools/call', { name: 'slow_compute', arguments: { seconds: 1, label: 'ln' } })).body.result;
  const l = await listen({ taskIds: [created.taskId, 'no-such-task'] });
  const ack = await l.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  const done = await l.next(isTask(created.taskId, 'completed'));
  l.close();
  const sub = done.params._meta?.['io.modelcontextprotocol/subscriptionId'];
  delete done.params._meta;
  const got = await detail(created.taskId);
  report(JSON.stringify(ack.params.notifications.taskIds) === JSON.stringify([created.taskId]) &&
    sub === 'l-1' && done.params.result?.content?.[0]?.text === 'Computed ln in 1 s.' &&
    JSON.stringify(done.params) === JSON.stringify(got),
  'a listen naming a task hears it complete, with the result tasks/get answers',
  JSON.stringify({ ack, done: done.params, got }));
});

// The official client-side Tasks library (@modelcontextprotocol/ext-tasks) validates a completed
// task's result as a complete CallToolResult: without resultType "complete" it reports the task
// as failed ("Protocol value failed schema validation").
await test('a completed task\'s result is a complete CallToolResult, its tool error too', async () => {
  const ok = (await post('tools/call', { name: 'slow_compute', arguments: { seconds: 1 } })).body.result;
  const bad = (await post('tools/call', { name: 'failing_job', arguments: {} })).body.result;
  const settled = async (taskId) => {
    for (let i = 0; i < 150; i++) {
      const t = await detail(taskId);
      if (t.status !== 'working') return t;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`task ${taskId} still working after 15 s`);
  };
  const [a, b] = [await settled(ok.taskId), await settled(bad.taskId)];
  report(a.status === 'completed' && a.result?.resultType === 'complete' && a.result.isError === false &&
    b.status === 'completed' && b.result?.resultType === 'complete' && b.result.isError === true,
  'a completed task\'s result is a complete CallToolResult, its tool error too', JSON.stringify({ a, b }));
});

await test('input asked on the stream, answered with tasks/update, then working and completed', async () => {
  const created = (await post('tools/call', { name: 'confirm_delete', arguments: { filename: 'a.txt' } })).body.result;
  const l = await listen({ taskIds: [created.taskId] });
  const asked = await l.next(isTask(created.taskId, 'input_required'));
  const key = Object.keys(asked.params.inputRequests ?? {})[0];
  const ack = (await post('tasks/update', { taskId: created.taskId,
    inputResponses: { [key]: { action: 'accept', content: { confirm: true } } } })).body.result;
  const working = await l.next(isTask(created.taskId, 'working'));
  const done = await l.next(isTask(created.taskId, 'completed'));
  l.close();
  report(key === 'confirm_delete' && asked.params.inputRequests[key].method === 'elicitation/create' &&
    ack.resultType === 'complete' && !('inputRequests' in working.params) &&
    done.params.result.content[0].text === 'Deleted a.txt.',
  'input asked on the stream, answered with tasks/update, then working and completed',
  JSON.stringify({ asked: asked.params, working: working.params, done: done.params }));
});

await test('a cancelled task is told cancelled on the stream', async () => {
  const created = (await post('tools/call', { name: 'slow_compute', arguments: { seconds: 30 } })).body.result;
  const l = await listen({ taskIds: [created.taskId] });
  await l.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  await post('tasks/cancel', { taskId: created.taskId });
  const c = await l.next(isTask(created.taskId, 'cancelled'));
  l.close();
  report(!('result' in c.params), 'a cancelled task is told cancelled on the stream');
});

await test('naming tasks on a listen without declaring the extension is -32021 (HTTP 400)', async () => {
  const created = (await post('tools/call', { name: 'slow_compute', arguments: { seconds: 5 } })).body.result;
  const r = await listen({ taskIds: [created.taskId] }, {});
  report(r.status === 400 && r.body?.error?.code === -32021 &&
    r.body.error.data?.requiredCapabilities?.extensions?.[EXT] !== undefined,
  'naming tasks on a listen without declaring the extension is -32021 (HTTP 400)', JSON.stringify(r.body));
  await post('tasks/cancel', { taskId: created.taskId });
});

await test('tasks over stdio: a task, then its completion on a listen of the same connection', async () => {
  const child = spawn(binary, ['stdio'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = readline.createInterface({ input: child.stdout });
  const seen = [];
  lines.on('line', (l) => seen.push(JSON.parse(l)));
  const next = async (pred) => {
    const until = Date.now() + 15000;
    for (;;) {
      const i = seen.findIndex(pred);
      if (i >= 0) return seen.splice(i, 1)[0];
      if (Date.now() > until) throw new Error(`stdio: nothing came; seen ${JSON.stringify(seen)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const send = (m) => child.stdin.write(`${JSON.stringify(m)}\n`);
  try {
    send(message('tools/call', { name: 'slow_compute', arguments: { seconds: 1 } }, declared, 'c'));
    const created = (await next((m) => m.id === 'c')).result;
    send(message('subscriptions/listen', { notifications: { taskIds: [created.taskId] } }, declared, 's'));
    const done = await next(isTask(created.taskId, 'completed'));
    send(message('tasks/get', { taskId: created.taskId }, declared, 'g'));
    const got = (await next((m) => m.id === 'g')).result;
    report(created.resultType === 'task' && got.status === 'completed' &&
      done.params._meta?.['io.modelcontextprotocol/subscriptionId'] === 's',
    'tasks over stdio: a task, then its completion on a listen of the same connection');
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
  }
});

process.exit(failures ? 1 : 0);
