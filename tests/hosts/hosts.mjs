// Reads every host configuration of hosts/ and uses it as its host would, with the official
// client (@modelcontextprotocol/client, tests/package.json): a stdio entry is launched with
// exactly its command, args and env (StdioClientTransport, which like a host passes only those
// and a default environment), the DATABASE_URL placeholder replaced by the test database's; an
// http entry is called at its url, its port replaced by the server's that suite.sh started.
// Each lists the tools and calls get_bike_status. The container entry cannot run without a
// Docker engine: its shape is checked instead. Prints `ok - ` / `not ok - ` lines.
// With HOSTS_TOKEN (a server that wants bearer tokens), a stdio entry's token placeholder is that
// token, pasted as a user would, and an http entry's host sends it as its OAuth flow would.
//   node hosts.mjs HOSTS_DIR   (env: HOSTS_DATABASE_URL, HOSTS_HTTP_PORT, HOSTS_TOKEN)
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const dir = process.argv[2];
// --generated: a folder host-config wrote (make run's, or the installed binary's), not the
// repository's hosts/: no docs to compare with; its links.txt (make run's) must decode to its files.
const generated = process.argv.includes('--generated');
const PLACEHOLDER_DB = 'postgresql://fleet_app@localhost/bikaroo';
const PLACEHOLDER_TOKEN = '<an access token>';
const TOKEN = process.env.HOSTS_TOKEN;
const REQ = { timeout: 15_000 };
let failures = 0;
const ok = (what) => console.log(`ok - ${what}`);
const nok = (what, err) => { failures++; console.log(`not ok - ${what}: ${err?.message ?? err}`); };

// The servers of one file: VS Code's `servers` (with `type`) or the `mcpServers` of Claude
// Desktop and Cursor (stdio when `command`, http when `url`).
function entries(file) {
  const j = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const map = j.servers ?? j.mcpServers;
  if (!map || typeof map !== 'object') throw new Error('neither servers nor mcpServers');
  return Object.entries(map).map(([name, e]) => {
    const type = j.servers ? e.type : e.command ? 'stdio' : e.url ? 'http' : undefined;
    if (!['stdio', 'http'].includes(type)) throw new Error(`${name}: no usable type`);
    return { name, type, e };
  });
}

async function scenario(client, transport) {
  await client.connect(transport, REQ);
  const { tools } = await client.listTools(undefined, REQ);
  const names = tools.map((t) => t.name);
  if (!names.includes('get_bike_status')) throw new Error(`tools/list: ${names.join(', ')}`);
  const r = await client.callTool({ name: 'get_bike_status', arguments: { bikeId: 'VL-2048' } }, REQ);
  const text = JSON.stringify(r.structuredContent ?? r.content);
  if (r.isError || !text.includes('VL-2048')) throw new Error(`get_bike_status: ${text.slice(0, 300)}`);
  return names;
}

async function runStdio(file, { name, e }) {
  const env = Object.fromEntries(Object.entries(e.env ?? {}).map(([k, v]) =>
    [k, v === PLACEHOLDER_DB ? process.env.HOSTS_DATABASE_URL : v === PLACEHOLDER_TOKEN && TOKEN ? TOKEN : v]));
  const transport = new StdioClientTransport({ command: e.command, args: e.args ?? [], env, stderr: 'pipe', cwd: '/' });
  const log = [];
  transport.stderr?.on('data', (c) => { log.push(String(c)); });
  const client = new Client({ name: `hosts-${file}`, version: '1.0.0' });
  try {
    const names = await scenario(client, transport);
    ok(`${file} (${name}, stdio): ${e.command} ${(e.args ?? []).join(' ')} lists ${names.length} tools and answers get_bike_status`);
  } catch (err) {
    nok(`${file} (${name}, stdio)`, new Error(`${err.message}\n# server stderr: ${log.join('').slice(-1500).replace(/\n/g, '\n# ')}`));
  } finally {
    await client.close().catch(() => {});
  }
}

async function runHttp(file, { name, e }) {
  const url = new URL(e.url);
  if (!generated) url.port = process.env.HOSTS_HTTP_PORT; // generated files name the real port
  const client = new Client({ name: `hosts-${file}`, version: '1.0.0' });
  try {
    const auth = TOKEN ? { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } } : undefined;
    const names = await scenario(client, new StreamableHTTPClientTransport(url, auth));
    ok(`${file} (${name}, http): ${e.url} (port ${url.port}) lists ${names.length} tools and answers get_bike_status`);
  } catch (err) {
    nok(`${file} (${name}, http)`, err);
  } finally {
    await client.close().catch(() => {});
  }
}

// `docker run -i --rm [...] IMAGE stdio`: interactive (stdin is the wire), removed after, every
// env value the entry sets passed in with -e NAME, the subcommand last (the image's entrypoint
// is bikaroo-mcp: Dockerfile).
function checkContainer(file, { name, e }) {
  const a = e.args ?? [];
  const passed = a.flatMap((x, i) => (a[i - 1] === '-e' ? [x] : []));
  const missing = Object.keys(e.env ?? {}).filter((k) => !passed.includes(k));
  const problems = [];
  if (a[0] !== 'run') problems.push('not docker run');
  if (!a.includes('-i')) problems.push('no -i');
  if (!a.includes('--rm')) problems.push('no --rm');
  if (a.includes('-t')) problems.push('-t would mangle the JSON-RPC stream');
  if (a[a.length - 1] !== 'stdio') problems.push('the last argument is not stdio');
  if (missing.length) problems.push(`env not passed with -e: ${missing.join(' ')}`);
  if (!/^ENTRYPOINT \["[^"]*bikaroo-mcp"\]/m.test(fs.readFileSync(path.join(dir, '../Dockerfile'), 'utf8'))) {
    problems.push("the Dockerfile's ENTRYPOINT is not bikaroo-mcp");
  }
  if (problems.length) nok(`${file} (${name}, container)`, problems.join('; '));
  else ok(`${file} (${name}, container): docker run -i --rm ... ${a[a.length - 2]} stdio has its shape (no Docker engine here to run it)`);
}

// make run's install links (links.txt: "HOST (...):" then the link) carry exactly HOST.json's entry.
function checkLinks() {
  const file = path.join(dir, 'links.txt');
  if (!fs.existsSync(file)) return;
  const text = fs.readFileSync(file, 'utf8');
  for (const m of text.matchAll(/^([a-z-]+) \(.*\):\n(\S+)$/gm)) {
    const [, host, link] = m;
    const entry = JSON.parse(fs.readFileSync(path.join(dir, `${host}.json`), 'utf8'));
    const want = (entry.servers ?? entry.mcpServers)['bikaroo-fleet'];
    let got;
    if (link.startsWith('vscode:mcp/install?')) {
      const { name, ...rest } = JSON.parse(decodeURIComponent(link.slice('vscode:mcp/install?'.length)));
      got = name === 'bikaroo-fleet' ? rest : { name };
    } else if (link.startsWith('cursor://anysphere.cursor-deeplink/mcp/install?')) {
      const q = new URL(link).searchParams;
      got = q.get('name') === 'bikaroo-fleet' ? JSON.parse(Buffer.from(q.get('config'), 'base64').toString()) : {};
    }
    if (JSON.stringify(got) === JSON.stringify(want)) ok(`links.txt: the ${host} install link carries ${host}.json's entry as it is`);
    else nok(`links.txt: the ${host} install link`, `${JSON.stringify(got)} is not ${JSON.stringify(want)}`);
  }
}

if (generated) {
  checkLinks();
} else {
  checkDocs();
}

// docs/hosts.md shows every file as it is (section Host configurations), and every host
// configuration the README shows is one of the files, as it is.
function checkDocs() {
  const hostsDoc = fs.readFileSync(path.join(dir, '../docs/hosts.md'), 'utf8');
  const texts = new Map();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8').trimEnd();
    texts.set(text, file);
    if (hostsDoc.includes(`\`hosts/${file}\``) && hostsDoc.includes(`\`\`\`json\n${text}\n\`\`\``)) ok(`docs/hosts.md shows hosts/${file} as it is`);
    else nok(`docs/hosts.md shows hosts/${file} as it is`, 'missing or different');
  }
  const readme = fs.readFileSync(path.join(dir, '../README.md'), 'utf8');
  for (const m of readme.matchAll(/```json\n([\s\S]*?)\n```/g)) {
    if (!m[1].includes('"bikaroo-fleet"')) continue;
    if (texts.has(m[1])) ok(`the README's host configuration is hosts/${texts.get(m[1])} as it is`);
    else nok("the README's host configuration is one of hosts/*.json as it is", 'no file has this text');
  }
}

for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
  let list;
  try { list = entries(file); } catch (err) { nok(`${file}: a host configuration`, err); continue; }
  for (const entry of list) {
    if (entry.type === 'http') await runHttp(file, entry);
    else if (entry.e.command === 'docker') checkContainer(file, entry);
    else await runStdio(file, entry);
  }
}
process.exit(failures ? 1 : 0);
