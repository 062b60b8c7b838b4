// Browser tests of the MCP Apps views (tests/ui/suite.sh runs this with the pinned Node 22):
// Debian's Chromium, driven by puppeteer-core, opens a test host page (host.js: the extension's
// AppBridge and the official client) that renders the views of the running product in sandboxed
// frames, and the tests assert what a person sees and what PostgreSQL holds. Prints one
// "ok - ..." / "not ok - ..." line per test. Screenshots go to UI_OUT.
//
// Env: UI_MCP_MARIE, UI_MCP_DEV, UI_MCP_CAREFUL, UI_MCP_TOM, UI_MCP_OLIVIA, UI_MCP_NADIA (the /mcp
// URLs of the products: marie via customer-care-assistant, dev via developer-ide, marie via
// careful-assistant, tom, olivia and nadia via ops-assistant), UI_DB_URL (psql conninfo of the test database, a role that reads every
// row), UI_OUT (a directory for screenshots), UI_CHROMIUM (the browser binary).
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import puppeteer from "puppeteer-core";
import { build } from "rolldown";

const here = path.dirname(fileURLToPath(import.meta.url));
const env = (k) => {
  if (!process.env[k]) throw new Error(`${k} is not set`);
  return process.env[k];
};
const PRODUCTS = {
  marie: env("UI_MCP_MARIE"), dev: env("UI_MCP_DEV"), careful: env("UI_MCP_CAREFUL"),
  tom: env("UI_MCP_TOM"), olivia: env("UI_MCP_OLIVIA"), nadia: env("UI_MCP_NADIA"),
};
const DB = env("UI_DB_URL");
const OUT = env("UI_OUT");
const UI = "io.modelcontextprotocol/ui";
const MIME = "text/html;profile=mcp-app";
const STEP_MS = 15_000;

// The Content Security Policy the extension requires a host to apply to a view that declares no
// _meta.ui.csp (its restrictive default), with the sandbox proxy's frame-src, object-src and
// base-uri rules.
const VIEW_CSP = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "media-src 'self' data:",
  "connect-src 'none'",
  "frame-src 'none'",
  "object-src 'none'",
  "base-uri 'self'",
].join("; ");

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}`);
    // The whole message (a check may list several problems), then where it was thrown.
    const lines = String(e?.stack || e).split("\n");
    const at = lines.findIndex((l) => /^\s+at /.test(l));
    for (const line of at < 0 ? lines : lines.slice(0, at + 3)) console.log(`#   ${line}`);
  }
}
function assert(cond, message) {
  if (!cond) throw new Error(message);
}
const psql = (sql) => execFileSync("psql", ["-X", "-At", "-v", "ON_ERROR_STOP=1", DB, "-c", sql], { encoding: "utf8" }).trim();
const quote = (s) => `'${s.replaceAll("'", "''")}'`;

// A demo bike of FR-PAR (marie's and dev's region) that is available and has no open case, so
// that the run does not depend on what other suites reported before.
const BIKE = psql(`SELECT bike_id FROM fleet.bikes b WHERE region = 'FR-PAR' AND status = 'available'
  AND NOT EXISTS (SELECT 1 FROM fleet.cases c WHERE c.bike_id = b.bike_id AND c.state <> 'closed')
  ORDER BY bike_id DESC LIMIT 1`);
assert(/^VL-\d+$/.test(BIKE), `no available bike without an open case in FR-PAR: ${JSON.stringify(BIKE)}`);
// marie's name as PostgreSQL holds it (the views name people, never their ids), and FR-PAR's.
const MARIE = psql("SELECT display_name FROM fleet.principals WHERE subject = 'marie'");
const PARIS = psql("SELECT name FROM fleet.regions WHERE code = 'FR-PAR'");
const NAMES = Object.fromEntries(psql("SELECT subject || '|' || display_name FROM fleet.principals").split("\n").map((l) => l.split("|")));
const OPS = psql("SELECT name FROM fleet.client_apps WHERE client_id = 'ops-assistant'");
// One step of a case's workflow taken straight through its write function (what the tools call),
// as `who` via their application (marie's customer-care-assistant, the others' ops-assistant),
// confirmed: what other people or devices do meanwhile. Its outcome.
const sqlStep = (who, tool, args) => psql(`SELECT outcome FROM fleet.case_step_as((${quote(who)}, ${quote(who === "marie" ? "customer-care-assistant" : "ops-assistant")},
  ${quote(JSON.stringify(args))}::jsonb, ${quote(tool)}, NULL, encode(sha256(${quote(randomUUID())}::bytea), 'hex'), ${quote("ui-" + tool)}, true,
  ${quote(args.caseId)}, NULL, NULL, NULL)::fleet.write_call)`);
// Another bike of FR-PAR, available and without a case, for a test of its own: its id, and the
// case a report by marie opened for it.
function freshCase(issue = "frame_damage") {
  const bike = psql(`SELECT bike_id FROM fleet.bikes b WHERE region = 'FR-PAR' AND status = 'available' AND bike_id <> ${quote(BIKE)}
    AND NOT EXISTS (SELECT 1 FROM fleet.cases c WHERE c.bike_id = b.bike_id) ORDER BY bike_id DESC LIMIT 1`);
  const kase = psql(`SELECT result ->> 'case_id' FROM fleet.report_damaged_bike_as(('marie', 'customer-care-assistant',
    ${quote(JSON.stringify({ bikeId: bike, issue }))}::jsonb, 'report_damaged_bike', NULL, encode(sha256(${quote(randomUUID())}::bytea), 'hex'), 'ui-report', false,
    ${quote(bike)}, NULL, NULL, NULL)::fleet.write_call)`);
  assert(/^VL-\d+$/.test(bike) && /^IC-\d+$/.test(kase), `a fresh case: ${bike} ${kase}`);
  return { bike, kase };
}
const caseState = (id) => psql(`SELECT concat_ws('|', state, finding, resolution) FROM fleet.cases WHERE case_id = ${quote(id)}`);

// ---- the host page's files and a small static server (127.0.0.1 only) ---------------------------
mkdirSync(OUT, { recursive: true });
const site = path.join(OUT, "site");
mkdirSync(site, { recursive: true });
await build({
  input: path.join(here, "host.js"),
  platform: "browser",
  logLevel: "warn",
  output: { file: path.join(site, "host.bundle.js"), format: "esm" },
});
copyFileSync(path.join(here, "host.html"), path.join(site, "host.html"));
copyFileSync(path.join(here, "sandbox.html"), path.join(site, "sandbox.html"));

// Forwards /mcp/<who> to that product, streaming both ways (SSE answers included).
function proxy(req, res, target) {
  const url = new URL(target);
  const headers = { ...req.headers, host: url.host };
  delete headers.connection;
  const up = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: req.method, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on("error", (e) => { res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
}
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };
const server = http.createServer((req, res) => {
  const u = new URL(req.url, "http://x");
  const who = /^\/mcp\/(marie|dev|careful|tom|olivia|nadia)$/.exec(u.pathname);
  if (who) return proxy(req, res, PRODUCTS[who[1]]);
  const file = { "/host.html": "host.html", "/host.bundle.js": "host.bundle.js", "/sandbox.html": "sandbox.html" }[u.pathname];
  if (!file || req.method !== "GET") { res.writeHead(404); res.end(); return; }
  const headers = { "content-type": TYPES[path.extname(file)], "cache-control": "no-store" };
  // The view's policy on the sandbox proxy (its inner frame inherits it). A view that declared
  // domains (?csp=) would get them added; ours declare none.
  if (file === "sandbox.html") headers["content-security-policy"] = VIEW_CSP;
  res.writeHead(200, headers);
  res.end(readFileSync(path.join(site, file)));
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const port = server.address().port;
// The sandbox proxy's origin differs from the host page's (localhost vs 127.0.0.1), as the
// extension requires of a web host.
const hostUrl = (who, o = {}) => {
  const q = new URLSearchParams({
    mcp: `/mcp/${who}`,
    sandbox: `http://localhost:${port}/sandbox.html`,
    locale: o.locale || "en-US",
    theme: o.theme || "light",
    width: String(o.width || 600),
    elicit: o.elicit || "",
    lose: o.lose ? "1" : "",
  });
  return `http://127.0.0.1:${port}/host.html?${q}`;
};

// ---- the browser -------------------------------------------------------------------------------
const browser = await puppeteer.launch({
  executablePath: env("UI_CHROMIUM"),
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"],
});

// Opens the host page and connects it; returns the page.
async function openHost(who, o) {
  const page = await browser.newPage();
  // Tall enough for every frame a test opens: screenshots are of the viewport (a full-page one
  // resizes it, and the views' frames, on another origin, may then be captured blank).
  await page.setViewport({ width: (o?.width || 600) + 40, height: 2000 });
  page.on("pageerror", (e) => console.log(`# page error: ${e.message}`));
  await page.goto(hostUrl(who, o), { waitUntil: "load" });
  await page.waitForFunction(() => window.bikarooHost, { timeout: STEP_MS });
  await page.evaluate(() => window.bikarooHost.connect());
  return page;
}
// The view's own frame (the sandbox proxy's inner frame) for the nth outer iframe data-view=name.
async function viewFrame(page, name, nth = 0) {
  await page.waitForFunction((sel, n) => document.querySelectorAll(sel).length > n, { timeout: STEP_MS }, `iframe[data-view="${name}"]`, nth);
  const outer = (await page.$$(`iframe[data-view="${name}"]`))[nth];
  const proxyFrame = await outer.contentFrame();
  for (let i = 0; i < 100; i++) {
    const inner = proxyFrame.childFrames()[0];
    if (inner && (await inner.evaluate(() => !!document.querySelector("main")).catch(() => false))) return inner;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no view frame for ${name}`);
}
const text = (frame, sel) => frame.$eval(sel, (e) => e.textContent.trim());
const visible = (frame, sel) => frame.$eval(sel, (e) => !e.hidden && e.offsetParent !== null);
// Waits until sel is shown (the card shows some controls only once it has read what the caller
// may do through the host).
async function waitVisible(frame, sel, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await visible(frame, sel).catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${sel} is not shown`);
}
async function waitText(frame, sel, re, ms = STEP_MS) {
  const deadline = Date.now() + ms;
  let last = "";
  while (Date.now() < deadline) {
    last = await text(frame, sel).catch(() => "");
    if (re.test(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${sel}: ${JSON.stringify(last)} does not match ${re}`);
}
async function shot(page, name) {
  // Once the frames have stopped resizing (a frame the host has just resized can be captured
  // before it is painted again, blank).
  let last = "";
  for (let i = 0; i < 30; i++) {
    const now = await page.$$eval("iframe", (fs) => fs.map((f) => f.style.height).join());
    if (now === last) break;
    last = now;
    await new Promise((r) => setTimeout(r, 150));
  }
  await new Promise((r) => setTimeout(r, 150));
  await page.screenshot({ path: path.join(OUT, `${name}.png`) });
}
// Presses keys in order on whatever has the focus (keyboard only).
async function keys(page, ...list) {
  for (const k of list) await page.keyboard.press(k);
}
const focused = (frame) => frame.evaluate(() => document.activeElement && (document.activeElement.id || document.activeElement.tagName));

// What a person reads in a view: the text of every rendered element, the server's own words a
// view quotes as it said them included (.server: a refusal, read by the same people), except
// what a user typed (.quote) and the values of form fields.
const SHOWN_TEXT = `(() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const el = n.parentElement;
    if (!n.data.trim() || el.closest(".quote, script, style, textarea, select") || !el.checkVisibility()) continue;
    out.push(n);
  }
  return out;
})()`;
// Words someone who does not know MCP would stumble on: tool and protocol names, JSON-RPC, error
// codes, a regex, a raw code (snake_case), an unfilled placeholder, a script's leftovers.
const JARGON = new RegExp([
  "\\b[a-z]+_[a-z_]+\\b", "\\b(json|rpc|jsonrpc|elicitation|capabilit\\w*|idempotency\\w*|schema|uri|mcp)\\b",
  "\\b(tools?|host|server|resource|outils?|hôte|serveur|ressource)\\b", "\\b(null|undefined|NaN)\\b",
  "-32\\d{3}", "[\\^$\\\\]", "\\[0-9\\]", "\\{\\w*\\}", "\\w+://",
].join("|"), "i");
async function jargon(frame) {
  const lines = await frame.evaluate(`${SHOWN_TEXT}.map((n) => n.data.trim())`);
  return lines.filter((l) => JARGON.test(l));
}
async function assertPlain(frame, where) {
  const found = await jargon(frame);
  assert(found.length === 0, `${where}: words a user does not know: ${JSON.stringify(found)}`);
}
// The ids (bike, case, report, station, region) shown across two lines.
const ID_RE = "\\b(?:[A-Z]{2,3}-[0-9]+|[A-Z]{2}-[A-Z]{3})\\b";
async function brokenIds(frame) {
  return frame.evaluate(`${SHOWN_TEXT}.flatMap((n) => [...n.data.matchAll(new RegExp(${JSON.stringify(ID_RE)}, "g"))].filter((m) => {
    const r = document.createRange();
    r.setStart(n, m.index);
    r.setEnd(n, m.index + m[0].length);
    return new Set([...r.getClientRects()].filter((q) => q.width > 0).map((q) => Math.round(q.top))).size > 1;
  }).map((m) => m[0]))`);
}
const overflows = (frame) => frame.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
// Where sel sits in its view (the view's own coordinates).
const box = (frame, sel) => frame.$eval(sel, (e) => { const r = e.getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }; });
// How far right the view's text reaches, as a share of its width.
const textReach = (frame) => frame.evaluate(`Math.max(...${SHOWN_TEXT}.map((n) => { const r = document.createRange(); r.selectNodeContents(n); return r.getBoundingClientRect().right; })) / document.documentElement.clientWidth`);

// ---- the tests ---------------------------------------------------------------------------------
const listedWith = {};
const VIEWS = ["ui://bikaroo/bike-card", "ui://bikaroo/case-queue", "ui://bikaroo/case-timeline"];
await check("a client that declares the extension sees the links and reads the three views, each one whole document with the parts they share; one that does not sees neither", async () => {
  const connect = async (caps) => {
    const c = new Client({ name: "bikaroo-ui-test", version: "1.0.0" }, { capabilities: caps, versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await c.connect(new StreamableHTTPClientTransport(new URL(PRODUCTS.marie)));
    return c;
  };
  const withExt = await connect({ extensions: { [UI]: { mimeTypes: [MIME] } } });
  const without = await connect({});
  try {
    const a = (await withExt.listTools()).tools, b = (await without.listTools()).tools;
    for (const t of a) listedWith[t.name] = t;
    assert(a.find((t) => t.name === "get_bike_status")?._meta?.ui?.resourceUri === "ui://bikaroo/bike-card", "get_bike_status links the card");
    assert(a.find((t) => t.name === "report_damaged_bike")?._meta?.ui?.resourceUri === "ui://bikaroo/bike-card", "report_damaged_bike links the card");
    assert(a.find((t) => t.name === "list_cases")?._meta?.ui?.resourceUri === "ui://bikaroo/case-queue", "list_cases links the queue");
    const tpl = (await withExt.listResourceTemplates()).resourceTemplates.find((t) => t.uriTemplate === "bikaroo://cases/{caseId}");
    assert(tpl?._meta?.ui?.resourceUri === "ui://bikaroo/case-timeline", "the case template links the timeline");
    // Without the extension: the same descriptors as with it, less _meta.ui, and no ui:// rows.
    const strip = (list) => JSON.stringify(list.map((t) => { const c = structuredClone(t); delete c._meta.ui; return c; }));
    assert(strip(a) === JSON.stringify(b), "tools/list without the extension differs from the same list less _meta.ui");
    assert(b.every((t) => !t._meta?.ui), "no _meta.ui without the extension");
    const resWith = (await withExt.listResources()).resources.map((r) => r.uri);
    const resWithout = (await without.listResources()).resources.map((r) => r.uri);
    assert(VIEWS.every((u) => resWith.includes(u)), `listed with: ${resWith}`);
    assert(!resWithout.some((u) => u.startsWith("ui://")), `listed without: ${resWithout}`);
    // The parts the views share (resources/view.css, view.js), put in by the server at load:
    // each view is one document that holds them, and nothing of the directive is left.
    const shared = readFileSync(path.join(here, "../../resources/view.js"), "utf8");
    for (const uri of VIEWS) {
      const r = await withExt.readResource({ uri });
      const c = r.contents[0];
      assert(c.mimeType === MIME && /^<!DOCTYPE html>/i.test(c.text) && c._meta?.ui?.prefersBorder === true, `${uri} as read`);
      assert(!/(src|href)\s*=\s*["']?(https?:)?\/\//i.test(c.text), `${uri} names an external origin`);
      assert(!c.text.includes("<!--#include") && c.text.includes(shared) && c.text.match(/<\/html>/g).length === 1,
        `${uri} is not one document with the shared parts in place`);
      let refused = false;
      try { await without.readResource({ uri }); } catch { refused = true; }
      assert(refused, `${uri} is readable without the extension`);
    }
  } finally {
    await withExt.close();
    await without.close();
  }
});

let page;
let card;
// The colour a status is shown in (the dot before its label).
const dotColor = (frame, sel) => frame.$eval(sel, (e) => getComputedStyle(e, "::before").backgroundColor);
await check("the card shows the bike as a person reads it: status in its colour, region, station, battery gauge, how long ago it was seen, no open case", async () => {
  page = await openHost("marie");
  await page.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
  card = await viewFrame(page, "get_bike_status");
  await waitText(card, "#title", new RegExp(`^Bike ${BIKE}$`));
  const [label, code, battery, seen] = psql(`SELECT s.label || '|' || b.status || '|' || coalesce(b.battery_pct::text, '') || '|' || to_char(b.last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM fleet.bikes b JOIN fleet.status_codes s ON s.code = b.status WHERE b.bike_id = ${quote(BIKE)}`).split("|");
  assert((await text(card, "#f-status")) === label, `status ${await text(card, "#f-status")} != ${label}`);
  assert((await card.$eval("#f-status", (e) => e.dataset.code)) === code, "status code");
  // The region by its name (bikaroo://fleet/regions), as the timeline names it.
  await waitText(card, "#f-region", new RegExp(`^${PARIS}$`));
  // get_bike_status 1.1.0 answers the station's id only (docs/capabilities.md: across a rolling upgrade).
  const station = psql(`SELECT coalesce(b.station_id, 'none') FROM fleet.bikes b WHERE b.bike_id = ${quote(BIKE)}`);
  assert((await text(card, "#f-station")) === station, `station ${await text(card, "#f-station")} != ${station}`);
  assert((await text(card, "#f-case")) === "none", "open case");
  if (battery) {
    // The level in words beside the gauge's colour (the meter's low and high marks).
    const level = battery < 20 ? "low" : battery < 50 ? "medium" : "high";
    assert((await text(card, "#f-battery")) === `${battery} % (${level})`, `battery: ${await text(card, "#f-battery")}`);
    assert(Number(await card.$eval("#f-meter", (e) => !e.hidden && e.value)) === Number(battery), "battery gauge");
  } else {
    assert((await text(card, "#f-battery")) === "unknown" && !(await visible(card, "#f-meter")), "no gauge without a reading");
  }
  // "3 days ago" (relative to this machine's clock, so the demo's dates may also be ahead).
  const ago = await text(card, "#f-seen");
  assert((await card.$eval("#f-seen", (e) => e.dateTime)) === seen, "the time element carries the instant");
  assert(/ ago$|^in \d|^(yesterday|tomorrow|now|today|last |next )/.test(ago), `seen: ${ago}`);
  // The status's colour, and a legend giving every status code of PostgreSQL its label and colour.
  const codes = psql("SELECT code || '|' || label FROM fleet.status_codes ORDER BY sort_order").split("\n").map((l) => l.split("|"));
  await card.$eval("#legend", (d) => { d.open = true; });
  const legend = await card.$$eval("#legend-list li", (ls) => ls.map((l) => [l.dataset.code, l.textContent.trim(), getComputedStyle(l.querySelector(".swatch")).backgroundColor]));
  assert(JSON.stringify(legend.map((l) => l[0])) === JSON.stringify(codes.map((c) => c[0])), `legend codes: ${legend.map((l) => l[0])}`);
  for (const [c, l] of codes) assert(legend.find((x) => x[0] === c)[1].startsWith(l), `legend label of ${c}`);
  assert(new Set(legend.map((l) => l[2])).size === codes.length, `every status its own colour: ${legend.map((l) => l[2])}`);
  assert((await dotColor(card, "#f-status")) === legend.find((l) => l[0] === code)[2], "the status is shown in its legend colour");
  // What marie may do next: report, which opens a new case.
  await waitVisible(card, "#open-report");
  assert(/opens a new investigation case/.test(await text(card, "#next-report")), "what a report would do");
  assert(!(await visible(card, "#next-readonly")), "no read-only note for a reporter");
  assert(!(await visible(card, "#open-case")), "no case button without an open case");
  await assertPlain(card, "the card");
  await shot(page, "bike-card-en-light");
  await card.$eval("#legend", (d) => { d.open = false; });
});

await check("the report form offers the tool's issues and description limit, labelled", async () => {
  const schema = listedWith.report_damaged_bike.inputSchema.properties;
  const options = await card.$$eval("#issue option", (os) => os.map((o) => o.value));
  assert(JSON.stringify(options) === JSON.stringify(schema.issue.enum), `options ${options} != enum ${schema.issue.enum}`);
  assert(Number(await card.$eval("#description", (e) => e.maxLength)) === schema.description.maxLength, "maxlength");
  const unlabelled = await card.evaluate(() => [...document.querySelectorAll("select, textarea, input")]
    .filter((e) => !(e.labels && e.labels.length && e.labels[0].textContent.trim())).map((e) => e.id));
  assert(unlabelled.length === 0, `unlabelled controls: ${unlabelled}`);
});

const description = `Browser test ${randomUUID()}: the rear brake does not hold.`;
let caseId;
await check("with the keyboard alone, the card shows what will happen, then files the report once and shows the new status", async () => {
  await waitVisible(card, "#open-report");
  await card.focus("#open-report");
  await keys(page, "Enter");
  assert((await focused(card)) === "issue", "the form takes the focus on its first field");
  await keys(page, "ArrowDown", "ArrowDown"); // brake_failure
  assert((await card.$eval("#issue", (e) => e.value)) === "brake_failure", "issue chosen by keyboard");
  await keys(page, "Tab");
  assert((await focused(card)) === "description", "Tab reaches the description");
  await page.keyboard.type(description);
  await keys(page, "Tab", "Enter"); // Review the report
  assert((await focused(card)) === "confirm", "the review takes the focus");
  assert((await text(card, "#c-bike")) === BIKE, "bike");
  assert((await text(card, "#c-region")) === PARIS, `region: ${await text(card, "#c-region")}`);
  assert((await text(card, "#c-issue")) === "Brake failure", "issue");
  assert(/damage report is filed.*unavailable.*new investigation case/.test(await text(card, "#c-effect")), "effect");
  // How the review reads is judged after the report is filed (the later tests need its case).
  const wording = [];
  if (!/^you, as signed in to this app/.test(await text(card, "#c-user"))) wording.push(`acting user: ${await text(card, "#c-user")}`);
  wording.push(...(await jargon(card)).map((w) => `the review says ${JSON.stringify(w)}`));
  assert(psql(`SELECT count(*) FROM fleet.damage_reports WHERE description = ${quote(description)}`) === "0", "nothing is written before sending");
  await shot(page, "bike-card-confirm");
  await keys(page, "Tab", "Enter"); // Send the report
  await waitText(card, "#message", /^Report DR-\d+ filed/);
  await waitText(card, "#f-status", /^Unavailable$/);
  assert(psql(`SELECT status FROM fleet.bikes WHERE bike_id = ${quote(BIKE)}`) === "unavailable", "the bike's status in PostgreSQL");
  const rows = psql(`SELECT report_id || ' ' || case_id || ' ' || reported_by || ' ' || reported_via || ' ' || issue FROM fleet.damage_reports WHERE description = ${quote(description)}`).split("\n");
  assert(rows.length === 1, `${rows.length} reports in PostgreSQL`);
  const [reportId, kase, by, via, issue] = rows[0].split(" ");
  caseId = kase;
  assert(by === "marie" && via === "customer-care-assistant" && issue === "brake_failure", rows[0]);
  assert((await text(card, "#message")).includes(reportId), "the message names the report");
  assert((await text(card, "#f-case")) === caseId, "the card shows the open case");
  // Who opened the case by name, as the case resource gives it.
  await waitText(card, "#f-case-state", new RegExp(`^\\(open, 1 report, opened .* by ${MARIE}\\)$`));
  assert((await text(card, "#next-report")) === `A report joins open case ${caseId}.`, "what the next report would do");
  const key = psql(`SELECT idem_key FROM fleet.idempotent_calls WHERE result->>'report_id' = ${quote(reportId)}`);
  assert(/^[0-9a-f-]{32,36}$/.test(key), `sent with a fresh idempotencyKey: ${JSON.stringify(key)}`);
  await shot(page, "bike-card-reported");
  await assertPlain(card, "the card after the report");
  assert(wording.length === 0, wording.join("\n"));
});

let tl;
await check("the open case opens its timeline, which reads the case through the host and says what the caller may do next", async () => {
  await waitVisible(card, "#open-case");
  await card.focus("#open-case");
  await keys(page, "Enter");
  tl = await viewFrame(page, "investigation-case");
  await waitText(tl, "#title", new RegExp(`^Case ${caseId}$`));
  // The title is shown while the case is read; its fields once it has been.
  await waitText(tl, "#f-bike", new RegExp(`^${BIKE}$`));
  assert((await text(tl, "#f-state")) === "open", "case header");
  const items = await tl.$$eval("#timeline li", (ls) => ls.map((l) => l.textContent));
  assert(items.some((t) => t.includes("Case opened")), `timeline: ${items}`);
  assert(items.some((t) => t.includes("Brake failure") && t.includes(description)), `timeline: ${items}`);
  const hostLog = await page.evaluate(() => window.hostLog);
  assert(hostLog.some((e) => e.event === "open-link" && e.detail === `bikaroo://cases/${caseId}`), "opened by ui/open-link");
  assert(await tl.evaluate(() => fetch("http://127.0.0.1:1/").then(() => false, () => true)), "the view reaches no network (CSP connect-src 'none')");
  await shot(page, "case-timeline-en-light");
  // marie opened the case and may report: her next step is to ask for an inspection.
  await waitText(tl, "#next", new RegExp(`^You can ask the workshop to inspect bike ${BIKE}\\.$`));
  await waitVisible(tl, "#step-buttons button");
  assert((await text(tl, "#step-buttons button")) === "Ask for an inspection", "the step offered");
  await assertPlain(tl, "the timeline");
});

await check("the timeline names the region, the people and the applications, never their codes or ids", async () => {
  const [who, app, region] = psql(`SELECT p.display_name || '|' || k.name || '|' || r.name FROM fleet.principals p, fleet.client_apps k,
    fleet.regions r WHERE p.subject = 'marie' AND k.client_id = 'customer-care-assistant' AND r.code = 'FR-PAR'`).split("|");
  assert((await text(tl, "#f-region")) === region, `region: ${await text(tl, "#f-region")}`);
  assert((await text(tl, "#f-opened")).endsWith(`by ${who} via ${app}`), `opened: ${await text(tl, "#f-opened")}`);
  const items = await tl.$$eval("#timeline li", (ls) => ls.map((l) => l.textContent));
  assert(items.length >= 2 && items.every((t) => t.includes(`${who} via ${app}`)), `timeline: ${items}`);
  assert(!items.some((t) => /\bmarie\b|customer-care-assistant/.test(t)), `ids in the timeline: ${items}`);
});

await check("the timeline says a status change in the statuses' labels, in English as in French", async () => {
  // bikaroo://fleet/status-codes's labels, read through the host.
  const [before, after] = psql("SELECT string_agg(label, '|' ORDER BY sort_order) FROM fleet.status_codes WHERE code IN ('available', 'unavailable')").split("|");
  await waitText(tl, "#timeline", new RegExp(`Status ${before} → ${after}`));
});
await page?.close();

await check("the timeline shows each step of the workflow: its note, who took it, and the finding", async () => {
  // The case of the report above, taken two steps further by the write functions the tools call,
  // as the people who take them: marie asks for an inspection, tom records what he found.
  assert(sqlStep("marie", "request_inspection", { caseId, note: "the brakes squeal downhill" }) === "ok", "inspection requested");
  assert(sqlStep("tom", "record_inspection", { caseId, finding: "repairable", note: "brake pads worn out" }) === "ok", "inspection recorded");
  const tom = psql("SELECT display_name FROM fleet.principals WHERE subject = 'tom'");
  const p = await openHost("marie");
  try {
    await p.evaluate((u) => window.bikarooHost.openResource(u), `bikaroo://cases/${caseId}`);
    const v = await viewFrame(p, "investigation-case");
    await waitText(v, "#f-finding", /^Repairable$/);
    const items = await v.$$eval("#timeline li", (ls) => ls.map((l) => l.textContent));
    assert(items.some((t) => t.includes("Inspection requested") && t.includes("the brakes squeal downhill") && t.includes(MARIE)), `timeline: ${items}`);
    assert(items.some((t) => t.includes("Inspection recorded") && t.includes("brake pads worn out") && t.includes(tom)), `timeline: ${items}`);
    await waitText(v, "#next", /^Inspected: a fleet operator now closes the case as repaired, no fault found, or written off\.$/);
    await shot(p, "case-timeline-inspected");
    await assertPlain(v, "the timeline of an inspected case");
  } finally {
    await p.close();
  }
});

// Opens the timeline of case id as `who` (host options o): the page and the view's frame, once the
// case is shown.
async function openTimeline(who, id, o) {
  const p = await openHost(who, o);
  await p.evaluate((u) => window.bikarooHost.openResource(u), `bikaroo://cases/${id}`);
  const v = await viewFrame(p, "investigation-case");
  await waitVisible(v, "#timeline li");
  return { p, v };
}
// With the keyboard alone: the nth step button, then the step's form (down: how many times the
// choice moves down from the first; note: typed when given), then Review. Returns the review's
// "what follows".
async function prepareStep(p, v, { nth = 0, down = 0, note } = {}) {
  await waitVisible(v, "#step-buttons button");
  await v.$$eval("#step-buttons button", (bs, n) => bs[n].focus(), nth);
  await keys(p, "Enter");
  await waitVisible(v, "#step-form");
  for (let i = 0; i < down; i++) await keys(p, "ArrowDown");
  if (!(await v.$eval("#choice", (e) => e.hidden))) await keys(p, "Tab");
  assert((await focused(v)) === "note", `the note after the choice: ${await focused(v)}`);
  if (note) await p.keyboard.type(note);
  await keys(p, "Tab", "Enter"); // Review
  await waitVisible(v, "#review");
  assert((await focused(v)) === "review", `the review takes the focus: ${await focused(v)}`);
  return text(v, "#r-effect");
}
// Send from the review; with confirm, the server's question is asked in the view and confirmed.
async function sendStep(p, v, { confirm = false } = {}) {
  await keys(p, "Tab", "Enter"); // Send
  if (confirm) {
    await waitVisible(v, "#ask");
    assert((await focused(v)) === "ask", `the server's question takes the focus: ${await focused(v)}`);
    await keys(p, "Tab", "Enter"); // Confirm
  }
  return waitText(v, "#outcome", /^Done: /);
}

// The STEPS table of the timeline against the tools' inputSchemas as tools/list gives them.
await check("the timeline's step forms offer exactly the tools' choices", async () => {
  const c = new Client({ name: "bikaroo-ui-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await c.connect(new StreamableHTTPClientTransport(new URL(PRODUCTS.olivia)));
  const t = new Client({ name: "bikaroo-ui-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await t.connect(new StreamableHTTPClientTransport(new URL(PRODUCTS.tom)));
  try {
    const listed = Object.fromEntries([...(await c.listTools()).tools, ...(await t.listTools()).tools].map((x) => [x.name, x.inputSchema]));
    const html = (await readFileSync(path.join(here, "../../resources/case-timeline.html"), "utf8"));
    const steps = JSON.parse(/const STEPS = (\{[\s\S]*?\n  \});/.exec(html)[1].replace(/(\w+):/g, '"$1":'));
    for (const [tool, spec] of Object.entries(steps)) {
      const props = listed[tool]?.properties;
      assert(props, `${tool} is not listed`);
      if (spec.arg) assert(JSON.stringify(props[spec.arg].enum) === JSON.stringify(spec.values), `${tool}.${spec.arg}: ${props[spec.arg].enum} != ${spec.values}`);
      assert(props.note.maxLength === 1000 && /const NOTE_MAX = 1000;/.test(html), `${tool}: the note's limit`);
    }
  } finally {
    await c.close();
    await t.close();
  }
});

const worked = {};
await check("each person takes their step in the timeline, reviewed first, through the host; a write-off waits for a second operator, who retires the bike", async () => {
  const { bike, kase } = freshCase();
  Object.assign(worked, { bike, kase });
  // marie asks for the inspection.
  let { p, v } = await openTimeline("marie", kase);
  try {
    assert((await text(v, "#step-buttons")) === "Ask for an inspection", "marie's step");
    const effect = await prepareStep(p, v, { note: "the frame creaks at the seat post" });
    assert(effect === `The case waits for a technician to inspect bike ${bike}; the bike stays out of service.`, effect);
    await assertPlain(v, "marie's review");
    assert(caseState(kase) === "open", "sent before Send");
    await sendStep(p, v);
    assert(caseState(kase) === "inspection_requested", caseState(kase));
    await waitText(v, "#next", /^Waiting for a technician to inspect bike/);
    assert(!(await visible(v, "#step-buttons")), "a step is still offered to marie");
    assert((await v.$$eval("#timeline li", (ls) => ls.map((l) => l.textContent))).some((x) => x.includes("Inspection requested") && x.includes("the frame creaks")), "the step in the timeline");
    await shot(p, "case-timeline-step-done");
  } finally {
    await p.close();
  }
  // tom records what he found: beyond repair.
  ({ p, v } = await openTimeline("tom", kase));
  try {
    await waitText(v, "#next", new RegExp(`^Bike ${bike} is waiting for your inspection`));
    await prepareStep(p, v, { down: 2, note: "head tube cracked" });
    assert((await text(v, "#r-step")) === "Record the inspection: Beyond repair", await text(v, "#r-step"));
    await sendStep(p, v);
    assert(caseState(kase) === "inspected|beyond_repair", caseState(kase));
  } finally {
    await p.close();
  }
  // olivia asks for the write-off: a note is required, the review and the server's question say
  // it waits for a second operator, confirmed in the view.
  ({ p, v } = await openTimeline("olivia", kase, { elicit: "manual" }));
  try {
    await waitVisible(v, "#step-buttons button");
    await v.focus("#step-buttons button");
    await keys(p, "Enter", "ArrowDown", "ArrowDown", "Tab", "Tab", "Enter"); // written off, no note, Review
    await waitText(v, "#note-count", /^Say why the bike should be written off\.$/);
    assert(!(await visible(v, "#review")), "reviewed without the note a write-off needs");
    await p.keyboard.type("head tube cracked, not worth a new frame");
    await keys(p, "Tab", "Enter");
    await waitVisible(v, "#review");
    assert(/^Nothing is closed yet: the write-off waits for a second fleet operator/.test(await text(v, "#r-effect")), await text(v, "#r-effect"));
    await keys(p, "Tab", "Enter"); // Send: the server asks first
    await waitVisible(v, "#ask");
    assert((await text(v, "#step-title")) === "Ask for a write-off", `the step's title: ${await text(v, "#step-title")}`);
    await waitText(v, "#ask-text", new RegExp(`^Bikaroo asks you to confirm this step before it is taken: Ask for the bike to be written off, case ${kase}\\.`));
    assert(caseState(kase) === "inspected|beyond_repair", "written off before it was confirmed");
    await assertPlain(v, "the server's question in the timeline");
    await shot(p, "case-timeline-confirmation-asked");
    await keys(p, "Tab", "Enter"); // Confirm
    await waitText(v, "#outcome", /^Done: the write-off is requested\. It now waits for a second fleet operator\.$/);
    assert(caseState(kase) === "awaiting_approval|beyond_repair", caseState(kase));
    // Not hers to decide: said so, nothing offered.
    await waitText(v, "#next", /^You asked for this write-off yourself: another fleet operator approves or refuses it\.$/);
    assert(!(await visible(v, "#step-buttons")), "olivia is offered her own write-off's decision");
    // Named, never by ids: who asked, through which application.
    await waitText(v, "#f-writeoff", new RegExp(`by ${NAMES.olivia} via ${OPS}$`));
    await assertPlain(v, "the write-off asked");
  } finally {
    await p.close();
  }
  // nadia approves: the case is closed, the timeline shows the bike retired.
  ({ p, v } = await openTimeline("nadia", kase, { elicit: "manual" }));
  try {
    await waitText(v, "#next", new RegExp(`^${NAMES.olivia} asked for bike ${bike} to be written off: you can approve or refuse it\\.$`));
    assert((await v.$$eval("#step-buttons button", (bs) => bs.map((b) => b.textContent))).join() === "Approve the write-off,Refuse the write-off", "nadia's choices");
    const effect = await prepareStep(p, v, { note: "agreed" });
    assert(effect === `The case is closed and bike ${bike} is retired for good.`, effect);
    await sendStep(p, v, { confirm: true });
    assert(caseState(kase) === "closed|beyond_repair|written_off", caseState(kase));
    assert(psql(`SELECT status FROM fleet.bikes WHERE bike_id = ${quote(bike)}`) === "retired", "the bike in PostgreSQL");
    await waitText(v, "#timeline", /Bike retired for good: Unavailable → Retired/);
    await waitText(v, "#next", new RegExp(`^This case is closed: bike ${bike} was written off and retired from the fleet\\.$`));
    await assertPlain(v, "the case closed");
    await shot(p, "case-timeline-retired");
  } finally {
    await p.close();
  }
});

await check("a retired bike's card offers no report, and says why", async () => {
  const p = await openHost("marie");
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), worked.bike);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#f-status", /^Retired$/);
    await waitText(f, "#next-retired", /^This bike has been retired from the fleet for good: there is nothing more to report on it\.$/);
    assert(!(await visible(f, "#open-report")) && !(await visible(f, "#next-report")), "Report damage is offered for a retired bike");
    await assertPlain(f, "a retired bike");
    await shot(p, "bike-card-retired");
  } finally {
    await p.close();
  }
});

await check("a case closed as repaired shows the bike back in service", async () => {
  const { bike, kase } = freshCase("flat_tire");
  assert(sqlStep("marie", "request_inspection", { caseId: kase }) === "ok", "inspection requested");
  assert(sqlStep("tom", "record_inspection", { caseId: kase, finding: "repairable" }) === "ok", "inspection recorded");
  const { p, v } = await openTimeline("olivia", kase);
  try {
    assert((await text(v, "#step-buttons")) === "Close the case", "olivia's step");
    const effect = await prepareStep(p, v, { note: "new inner tube" });
    assert(/^The case is closed; bike VL-\d+ goes back into service/.test(effect), effect);
    await sendStep(p, v);
    assert(caseState(kase) === "closed|repairable|repaired", caseState(kase));
    assert(psql(`SELECT status FROM fleet.bikes WHERE bike_id = ${quote(bike)}`) === "available", "the bike in PostgreSQL");
    await waitText(v, "#timeline", /Bike back in service: Unavailable → Available/);
    await shot(p, "case-timeline-back-in-service");
  } finally {
    await p.close();
  }
});

// A refusal is shown in the server's own words (in French, the view's own, from the step the
// refusal carries), and stays: after the case is read again, and until the person acts again.
const REFUSED = /^Not done: Case IC-\d+ /;
await check("a refusal stays on screen in the server's words: the host's call, and the view's own step after the case moved on", async () => {
  // The host calls a step the case is past (an assistant's mistake): refused, said, and still
  // said once the case has been read.
  const { kase } = freshCase("chain_broken");
  assert(sqlStep("marie", "request_inspection", { caseId: kase }) === "ok", "inspection requested");
  for (const o of [{}, { locale: "fr-FR", theme: "dark", width: 320 }]) {
    const p = await openHost("marie", o);
    try {
      const r = await p.evaluate((id) => window.bikarooHost.callTool("request_inspection", { caseId: id }), kase);
      assert(r.isError === true, "the host's call was not refused");
      const v = await viewFrame(p, "request_inspection");
      const fr = o.locale === "fr-FR";
      // English: the server's words; French: the view's own, from the step the refusal carries.
      await waitText(v, "#outcome", fr ? new RegExp(`^Non fait : le dossier ${kase} en est à l’étape « inspection demandée »\\. Rien n’a été modifié\\.$`) : REFUSED);
      await waitVisible(v, "#timeline li");
      await new Promise((res) => setTimeout(res, 1000));
      assert(await visible(v, "#outcome"), "the refusal is hidden once the case is read");
      if (!fr) assert((await text(v, "#outcome .server")) === r.content[0].text, `not the server's words: ${await text(v, "#outcome")}`);
      assert((await v.$eval("#outcome", (e) => e.getAttribute("role"))) === "alert", "announced as an alert");
      await assertPlain(v, "a refusal");
      assert((await brokenIds(v)).length === 0 && !(await overflows(v)), "an id broken or the view wider than its frame");
      await shot(p, fr ? "case-timeline-refused-fr-dark-320" : "case-timeline-refused");
    } finally {
      await p.close();
    }
  }
  // nadia prepares her approval while, on another device, she refuses it: the server refuses the
  // approval, the view reads the case again (back to inspected: closing it is offered now), and
  // the refusal stays until she takes the next step.
  const { kase: k2 } = freshCase("brake_failure");
  assert(sqlStep("olivia", "request_inspection", { caseId: k2 }) === "ok", "inspection requested");
  assert(sqlStep("tom", "record_inspection", { caseId: k2, finding: "beyond_repair" }) === "ok", "inspection recorded");
  assert(sqlStep("olivia", "close_case", { caseId: k2, resolution: "written_off", note: "rusted through" }) === "ok", "write-off asked");
  const { p, v } = await openTimeline("nadia", k2, { elicit: "manual" });
  try {
    await prepareStep(p, v, { note: "agreed" });
    assert(sqlStep("nadia", "decide_write_off", { caseId: k2, decision: "refuse", note: "repair it" }) === "ok", "refused elsewhere");
    await keys(p, "Tab", "Enter"); // Send
    await waitText(v, "#outcome", REFUSED);
    await waitText(v, "#step-buttons", /^Close the case$/);
    await new Promise((res) => setTimeout(res, 1000));
    assert(await visible(v, "#outcome"), "the refusal is hidden once the case is read again");
    assert(/has no write-off waiting for approval/.test(await text(v, "#outcome .server")), await text(v, "#outcome"));
    await assertPlain(v, "a refusal after the case moved on");
    assert(caseState(k2) === "inspected|beyond_repair", caseState(k2));
    await shot(p, "case-timeline-refused-race");
    await v.focus("#step-buttons button");
    await keys(p, "Enter"); // she acts again
    await waitVisible(v, "#step-form");
    assert(!(await visible(v, "#outcome")), "the refusal stays after she acted again");
  } finally {
    await p.close();
  }
});

// ---- the queues: each person starts from the cases waiting for them -----------------------------

// The queue `who` asks their host for (list_cases with args, host options o): the page and the
// view's frame, once the rows are shown.
async function openQueue(who, args, o) {
  const p = await openHost(who, o);
  await p.evaluate((a) => window.bikarooHost.callTool("list_cases", a), args);
  const q = await viewFrame(p, "list_cases");
  await waitVisible(q, "#list-actions");
  return { p, q };
}
// The selector of case id's row in queue q, looked for as a person does: on the page shown, then
// with "Show more" (keyboard) page after page; null when the queue does not hold it.
async function queueRow(p, q, id) {
  const sel = `#cases li[data-case="${id}"]`;
  for (let page = 0; page < 100; page++) {
    if (await q.$(sel)) return sel;
    if (!(await visible(q, "#more"))) return null;
    const n = await q.$$eval("#cases li", (ls) => ls.length);
    await q.focus("#more");
    await keys(p, "Enter");
    await q.waitForFunction((k) => document.querySelectorAll("#cases li").length > k || document.getElementById("more").hidden,
      { timeout: STEP_MS }, n);
  }
  throw new Error(`case ${id}: no end to the queue after 100 pages`);
}
// Opens the case of row sel from queue q with the keyboard: the timeline the host opens for it.
async function openFromQueue(p, q, sel, nth = 0) {
  await q.focus(`${sel} button`);
  await keys(p, "Enter");
  const v = await viewFrame(p, "investigation-case", nth);
  await waitVisible(v, "#timeline li");
  return v;
}
const rowText = (q, sel) => q.$eval(sel, (e) => e.innerText.replace(/\s+/g, " ").trim());

const walked = {};
await check("tried as a new user would: customer care, a technician and two fleet operators each find their part of a case in their queue and finish it in the views, never typing an id they were not shown", async () => {
  // A rider calls marie about a bike: its id on the frame is all anyone types, in her host's
  // call of get_bike_status. Everything after is read off what the views show.
  const bike = psql(`SELECT bike_id FROM fleet.bikes b WHERE region = 'FR-PAR' AND status = 'available'
    AND NOT EXISTS (SELECT 1 FROM fleet.cases c WHERE c.bike_id = b.bike_id) ORDER BY bike_id LIMIT 1`);
  assert(/^VL-\d+$/.test(bike), `no available FR-PAR bike without a case: ${bike}`);
  walked.bike = bike;
  let kase;
  // 1. marie (customer care) reports the damage from the bike's card.
  let p = await openHost("marie");
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), bike);
    const card = await viewFrame(p, "get_bike_status");
    await waitVisible(card, "#open-report");
    await card.focus("#open-report");
    await keys(p, "Enter", "ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown", "ArrowDown", "Tab"); // frame_damage
    await p.keyboard.type("The down tube is bent after a fall.");
    await keys(p, "Tab", "Enter", "Tab", "Enter"); // Review, Send
    await waitText(card, "#message", /^Report DR-\d+ filed/);
    kase = await waitText(card, "#f-case", /^IC-\d+$/); // the case she is shown
    assert(psql(`SELECT concat_ws('|', c.state, b.status, r.issue) FROM fleet.cases c JOIN fleet.bikes b USING (bike_id)
      JOIN fleet.damage_reports r USING (case_id) WHERE c.case_id = ${quote(kase)}`) === "open|unavailable|frame_damage", "the report in PostgreSQL");
  } finally {
    await p.close();
  }
  walked.kase = kase;
  // 2. marie's queue: her open case waits for her inspection request; she asks for it from its
  // timeline.
  let q, v;
  ({ p, q } = await openQueue("marie", { waitingForMe: true }));
  try {
    await waitText(q, "#title", /^Cases waiting for you$/);
    const sel = await queueRow(p, q, kase);
    assert(sel, `marie's queue does not list ${kase}`);
    const said = await rowText(q, sel);
    assert(said.includes(`Case ${kase}, bike ${bike}`) && said.includes("Your turn: ask the workshop for an inspection.")
      && said.includes(`Last step taken by ${MARIE} via`), said);
    await assertPlain(q, "marie's queue");
    await shot(p, "walk-1-marie-queue");
    v = await openFromQueue(p, q, sel);
    await waitText(v, "#title", new RegExp(`^Case ${kase}$`));
    await prepareStep(p, v, { note: "Bent down tube: please check the frame." });
    await sendStep(p, v);
    assert(caseState(kase) === "inspection_requested", `after marie: ${caseState(kase)}`);
    await shot(p, "walk-2-marie-asked");
  } finally {
    await p.close();
  }
  // 3. tom (technician): the inspection is in his queue; he records what he found.
  ({ p, q } = await openQueue("tom", { waitingForMe: true }));
  try {
    await waitText(q, "#title", /^Cases waiting for you$/);
    const sel = await queueRow(p, q, kase);
    assert(sel, `tom's queue does not list ${kase}`);
    const said = await rowText(q, sel);
    assert(said.includes("Your turn: record the inspection.") && said.includes("Bent down tube: please check the frame.")
      && said.includes("Frame damage, 1 report") && said.includes(PARIS), said);
    await assertPlain(q, "tom's queue");
    await shot(p, "walk-3-tom-queue");
    v = await openFromQueue(p, q, sel);
    await prepareStep(p, v, { down: 2, note: "Down tube cracked at the weld." });
    assert((await text(v, "#r-step")) === "Record the inspection: Beyond repair", await text(v, "#r-step"));
    await sendStep(p, v);
    assert(caseState(kase) === "inspected|beyond_repair", `after tom: ${caseState(kase)}`);
  } finally {
    await p.close();
  }
  // 4. olivia (fleet operator): among the cases to close; she asks for a write-off, confirmed in
  // the view; then her queue of write-offs to decide does not hold it.
  ({ p, q } = await openQueue("olivia", { step: "inspected", waitingForMe: true }, { elicit: "manual" }));
  try {
    await waitText(q, "#title", /^Cases waiting for you to close them$/);
    const sel = await queueRow(p, q, kase);
    assert(sel, `olivia's queue of cases to close does not list ${kase}`);
    const said = await rowText(q, sel);
    assert(said.includes("Your turn: close the case, or ask for a write-off.") && said.includes("Finding: beyond repair")
      && said.includes(`Last step taken by ${NAMES.tom} via`), said);
    await shot(p, "walk-4-olivia-queue");
    v = await openFromQueue(p, q, sel);
    await prepareStep(p, v, { down: 2, note: "Cracked frame: not worth a repair." });
    await sendStep(p, v, { confirm: true });
    assert(caseState(kase) === "awaiting_approval|beyond_repair", `after olivia: ${caseState(kase)}`);
    assert(psql(`SELECT write_off_requested_by FROM fleet.cases WHERE case_id = ${quote(kase)}`) === "olivia", "who asked");
  } finally {
    await p.close();
  }
  ({ p, q } = await openQueue("olivia", { step: "awaiting_approval", waitingForMe: true }));
  try {
    await waitText(q, "#title", /^Write-offs waiting for your decision$/);
    assert((await queueRow(p, q, kase)) === null, `olivia is offered her own write-off ${kase} to decide`);
  } finally {
    await p.close();
  }
  // 5. nadia (another fleet operator): the write-off waits for her decision; she approves it.
  ({ p, q } = await openQueue("nadia", { step: "awaiting_approval", waitingForMe: true }, { elicit: "manual" }));
  try {
    const sel = await queueRow(p, q, kase);
    assert(sel, `nadia's queue of write-offs does not list ${kase}`);
    const said = await rowText(q, sel);
    assert(said.includes("Your turn: approve or refuse the write-off.") && said.includes(`Last step taken by ${NAMES.olivia} via ${OPS}`)
      && said.includes("Cracked frame: not worth a repair."), said);
    await assertPlain(q, "nadia's queue");
    await shot(p, "walk-5-nadia-queue");
    v = await openFromQueue(p, q, sel);
    await waitText(v, "#next", new RegExp(`^${NAMES.olivia} asked for bike ${bike} to be written off`));
    await prepareStep(p, v, { note: "Agreed: retire it." });
    await sendStep(p, v, { confirm: true });
    assert(caseState(kase) === "closed|beyond_repair|written_off", `after nadia: ${caseState(kase)}`);
    assert(psql(`SELECT status FROM fleet.bikes WHERE bike_id = ${quote(bike)}`) === "retired", "the bike in PostgreSQL");
    await waitText(v, "#timeline", /Bike retired for good: Unavailable → Retired/);
    await shot(p, "walk-6-nadia-approved");
    // Back in her queue, it lists again: the case has left it.
    await q.$eval("#cases li", (li) => li.focus());
    await q.waitForFunction((id) => !document.querySelector(`#cases li[data-case="${id}"]`), { timeout: STEP_MS }, kase);
  } finally {
    await p.close();
  }
  // 6. The rider calls again: marie lists the bike's cases, closed ones too, and reads how it ended.
  ({ p, q } = await openQueue("marie", { bikeId: bike, includeClosed: true }));
  try {
    await waitText(q, "#title", new RegExp(`^Cases of bike ${bike}$`));
    const sel = await queueRow(p, q, kase);
    assert(sel, `the bike's cases do not list ${kase}`);
    const said = await rowText(q, sel);
    assert(/^Closed /.test(said) && said.includes("The bike is retired.") && said.includes(`Last step taken by ${NAMES.nadia} via`)
      && !said.includes("Your turn"), said);
    await assertPlain(q, "the bike's cases");
    await shot(p, "walk-7-marie-bike-history");
  } finally {
    await p.close();
  }
});

await check("the queue in English and French, light and dark, at 320 and 800 px: plain words, ids kept whole, the case's action beside its facts, the asker told the decision is someone else's", async () => {
  // A write-off olivia asked for: in her list of write-offs, not hers to decide.
  const { kase } = freshCase("battery_fault");
  assert(sqlStep("olivia", "request_inspection", { caseId: kase, note: "battery swollen" }) === "ok", "inspection requested");
  assert(sqlStep("tom", "record_inspection", { caseId: kase, finding: "beyond_repair", note: "cells damaged" }) === "ok", "inspection recorded");
  assert(sqlStep("olivia", "close_case", { caseId: kase, resolution: "written_off", note: "battery and frame gone" }) === "ok", "write-off asked");
  const problems = [];
  for (const locale of ["en-US", "fr-FR"]) {
    for (const theme of ["light", "dark"]) {
      for (const width of [320, 800]) {
        const name = `queue-${locale.slice(0, 2)}-${theme}-${width}`;
        const { p, q } = await openQueue("olivia", { step: "awaiting_approval" }, { locale, theme, width });
        try {
          const fr = locale === "fr-FR";
          const sel = await queueRow(p, q, kase);
          if (!sel) { problems.push(`${name}: ${kase} is not listed`); continue; }
          const want = fr ? "Vous avez demandé cette mise au rebut : un autre gestionnaire de flotte l’approuve ou la refuse."
            : "You asked for this write-off: another fleet operator approves or refuses it.";
          if (!(await rowText(q, sel)).includes(want)) problems.push(`${name}: the asker reads ${await rowText(q, sel)}`);
          if ((await text(q, "#title")) !== (fr ? "Mises au rebut à approuver" : "Write-offs awaiting approval"))
            problems.push(`${name}: title ${await text(q, "#title")}`);
          for (const w of await jargon(q)) problems.push(`${name}: says ${JSON.stringify(w)}`);
          for (const id of await brokenIds(q)) problems.push(`${name}: ${id} is broken across two lines`);
          if (await overflows(q)) problems.push(`${name}: wider than the frame`);
          if ((await q.evaluate(() => document.documentElement.dataset.theme)) !== theme) problems.push(`${name}: not ${theme}`);
          if (width === 800) {
            const a = await box(q, `${sel} .facts`), b = await box(q, `${sel} .actions`);
            if (!(b.left >= a.right && b.top < a.bottom)) problems.push(`${name}: the case's action is not beside its facts`);
          }
          await q.$eval(sel, (li) => li.scrollIntoView());
          await shot(p, name);
        } finally {
          await p.close();
        }
      }
    }
  }
  assert(problems.length === 0, problems.join("\n"));
  // Whom it waits for, to someone else: marie reads a case of hers waiting for a technician.
  const other = freshCase("lighting_fault");
  assert(sqlStep("marie", "request_inspection", { caseId: other.kase }) === "ok", "inspection requested");
  const { p, q } = await openQueue("marie", { bikeId: other.bike });
  try {
    const sel = await queueRow(p, q, other.kase);
    assert(sel && (await rowText(q, sel)).includes("Waiting for a technician."), sel && (await rowText(q, sel)));
    await assertPlain(q, "a case waiting for someone else");
  } finally {
    await p.close();
  }
});

await check("a long queue comes a page at a time: \"Show more\" adds the next page after the last case shown, none twice, and the focus goes to the first one added", async () => {
  // At least 21 active cases in olivia's regions, the page size being 20.
  const active = () => Number(psql("SELECT count(*) FROM fleet.cases WHERE state <> 'closed' AND region IN ('FR-PAR', 'FR-LYO')"));
  while (active() < 21) freshCase("flat_tire");
  const { p, q } = await openQueue("olivia", {});
  try {
    await waitText(q, "#title", /^Active cases$/);
    assert((await q.$$eval("#cases li", (ls) => ls.length)) === 20, "the first page is not 20 cases");
    await waitText(q, "#about", /^20 cases shown, the one waiting longest first; more below\.$/);
    const first = await q.$$eval("#cases li", (ls) => ls.map((l) => l.dataset.case));
    await q.focus("#more");
    await keys(p, "Enter");
    await q.waitForFunction(() => document.querySelectorAll("#cases li").length > 20, { timeout: STEP_MS });
    const all = await q.$$eval("#cases li", (ls) => ls.map((l) => l.dataset.case));
    assert(JSON.stringify(all.slice(0, 20)) === JSON.stringify(first) && new Set(all).size === all.length, `pages: ${all}`);
    // The queue's order is PostgreSQL's: when each case reached its step, then its id.
    const want = psql(`SELECT string_agg(case_id, ',' ORDER BY step_at, case_id) FROM (SELECT case_id, step_at FROM fleet.cases
      WHERE state <> 'closed' AND region IN ('FR-PAR', 'FR-LYO') ORDER BY step_at, case_id LIMIT ${all.length}) x`);
    assert(all.join() === want, `order: ${all.join()} != ${want}`);
    assert((await q.evaluate(() => document.activeElement.closest("li")?.dataset.case)) === all[20], "the focus is not on the first case added");
    await shot(p, "queue-more");
  } finally {
    await p.close();
  }
});

await check("a queue the server refuses says so in the server's words and lists again on Refresh; a queue with nothing in it says so in the person's", async () => {
  // The host passes a cursor that is not one (an assistant's mistake).
  let { p, q } = await openQueue("olivia", { cursor: "not-a-cursor" });
  try {
    await waitText(q, "#message", /^The cases could not be listed: This cursor is not one for this list/);
    assert((await text(q, "#message .server")).startsWith("This cursor is not one for this list"), "not in the server's words");
    assert((await q.$eval("#message", (e) => e.getAttribute("role"))) === "alert", "announced as an alert");
    assert(!(await visible(q, "#cases")), "cases are shown beside the refusal");
    await assertPlain(q, "a refused queue");
    await shot(p, "queue-refused");
    await q.focus("#refresh");
    await keys(p, "Enter");
    await waitVisible(q, "#cases li");
    assert(!(await visible(q, "#message")), "the refusal stays once the list is shown");
  } finally {
    await p.close();
  }
  ({ p, q } = await openQueue("dev", { waitingForMe: true }, { locale: "fr-FR" }));
  try {
    await waitText(q, "#title", /^Dossiers qui vous attendent$/);
    await waitText(q, "#message", /^Rien ne vous attend\.$/);
    assert(!(await visible(q, "#cases")), "an empty list is shown");
    await assertPlain(q, "an empty queue");
  } finally {
    await p.close();
  }
});

// The card (with its review before sending) and the timeline in both languages, both themes, at
// 320 and 800 px, and the timeline's next step for the person who may take it: plain words, ids
// whole on one line, nothing wider than the frame, and at 800 px the width used (what you can do
// beside the facts). A screenshot of each: views-LANG-THEME-WIDTH, steps-LANG-THEME-WIDTH.
await check("in English and French, light and dark, at 320 and 800 px: plain words, ids kept whole, the width used", async () => {
  const problems = [];
  for (const locale of ["en-US", "fr-FR"]) {
    for (const theme of ["light", "dark"]) {
      for (const width of [320, 800]) {
        const name = `views-${locale.slice(0, 2)}-${theme}-${width}`;
        const p = await openHost("marie", { locale, theme, width });
        try {
          await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
          const f = await viewFrame(p, "get_bike_status");
          await waitVisible(f, "#open-case");
          await waitVisible(f, "#open-report");
          await f.focus("#open-case");
          await keys(p, "Enter");
          const tl = await viewFrame(p, "investigation-case");
          await waitVisible(tl, "#timeline li");
          await f.focus("#open-report");
          await keys(p, "Enter", "Tab");
          await p.keyboard.type("Le garde-boue avant frotte.");
          await keys(p, "Tab", "Enter");
          await waitVisible(f, "#confirm");
          for (const [view, frame] of [["card", f], ["timeline", tl]]) {
            for (const w of await jargon(frame)) problems.push(`${name} ${view}: says ${JSON.stringify(w)}`);
            for (const id of await brokenIds(frame)) problems.push(`${name} ${view}: ${id} is broken across two lines`);
            if (await overflows(frame)) problems.push(`${name} ${view}: wider than the frame`);
          }
          if (width === 800) {
            for (const [view, frame, facts, next] of [["card", f, "#card > dl", "#next"], ["timeline", tl, "#case > dl", "#next-title"]]) {
              const a = await box(frame, facts), b = await box(frame, next);
              if (!(b.left >= a.right && b.top < a.bottom)) problems.push(`${name} ${view}: what you can do is not beside the facts`);
            }
            const reach = await textReach(f);
            if (reach < 0.75) problems.push(`${name} card: its text reaches ${Math.round(reach * 100)} % of the width`);
          }
          await shot(p, name);
        } finally {
          await p.close();
        }
        // The timeline's step, as olivia may take it on that case: its form, then its review
        // (nothing is sent). A screenshot of each: steps-LANG-THEME-WIDTH.
        const { p: q, v } = await openTimeline("olivia", caseId, { locale, theme, width });
        try {
          await prepareStep(q, v, { down: 2, note: "Le cadre est fissuré." });
          const steps = name.replace("views-", "steps-");
          for (const w of await jargon(v)) problems.push(`${steps} timeline: says ${JSON.stringify(w)}`);
          for (const id of await brokenIds(v)) problems.push(`${steps} timeline: ${id} is broken across two lines`);
          if (await overflows(v)) problems.push(`${steps} timeline: wider than the frame`);
          if (width === 800) {
            const a = await box(v, "#case > dl"), b = await box(v, "#step");
            if (!(b.left >= a.right)) problems.push(`${steps} timeline: the step is not beside the facts`);
          }
          await shot(q, steps);
        } finally {
          await q.close();
        }
      }
    }
  }
  assert(problems.length === 0, problems.join("\n"));
});

await check("a low battery and a bike not seen for a day are said in words, not by colour alone", async () => {
  const [low, pct, seen] = psql(`SELECT bike_id || '|' || battery_pct || '|' || last_seen_at FROM fleet.bikes WHERE region = 'FR-PAR'
    AND battery_pct < 20 ORDER BY battery_pct DESC, bike_id LIMIT 1`).split("|");
  assert(/^VL-\d+$/.test(low), `no bike with a low battery in FR-PAR: ${low}`);
  const show = async (locale) => {
    const p = await openHost("marie", { locale });
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), low);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#f-seen", /\S/);
    return { p, f };
  };
  try {
    psql(`UPDATE fleet.bikes SET last_seen_at = now() - interval '3 days' WHERE bike_id = ${quote(low)}`);
    let { p, f } = await show("en-US");
    assert((await text(f, "#f-battery")) === `${pct} % (low)`, `battery: ${await text(f, "#f-battery")}`);
    assert((await text(f, "#f-stale")) === "not seen for more than a day", `stale: ${await text(f, "#f-stale")}`);
    await shot(p, "bike-card-low-stale");
    await p.close();
    ({ p, f } = await show("fr-FR"));
    assert((await text(f, "#f-battery")) === `${pct} % (faible)`, `batterie : ${await text(f, "#f-battery")}`);
    assert((await text(f, "#f-stale")) === "pas vu depuis plus d’un jour", `ancien : ${await text(f, "#f-stale")}`);
    await p.close();
    psql(`UPDATE fleet.bikes SET last_seen_at = now() - interval '5 minutes' WHERE bike_id = ${quote(low)}`);
    ({ p, f } = await show("en-US"));
    assert(!(await visible(f, "#f-stale").catch(() => false)), "a bike seen 5 minutes ago is said not to have been seen for a day");
    await p.close();
  } finally {
    psql(`UPDATE fleet.bikes SET last_seen_at = ${quote(seen)} WHERE bike_id = ${quote(low)}`);
  }
});

await check("in French and the dark theme at 320 px the card reads in French and nothing overflows", async () => {
  const p = await openHost("marie", { locale: "fr-FR", theme: "dark", width: 320 });
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#title", new RegExp(`^Vélo ${BIKE}$`));
    await waitVisible(f, "#open-report");
    assert((await text(f, "#open-report")) === "Signaler un dommage", "French button");
    assert((await text(f, "#f-status")) === "Indisponible", `French status: ${await text(f, "#f-status")}`);
    assert(/^(il y a |dans |hier|demain|maintenant|aujourd)/.test(await text(f, "#f-seen")), `French freshness: ${await text(f, "#f-seen")}`);
    // The case's step in French: the workflow check above left it inspected.
    await waitText(f, "#f-case-state", new RegExp(`^\\(inspecté, \\d+ signalements?, ouvert .* par ${MARIE}\\)$`));
    assert((await f.$eval("dt", (e) => e.textContent)) === "État", "French label");
    assert((await f.evaluate(() => document.documentElement.dataset.theme)) === "dark", "dark theme");
    const bg = await f.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert(bg === "rgb(18, 20, 23)", `the host's background variable: ${bg}`);
    await f.focus("#open-report");
    await keys(p, "Enter");
    const over = await f.evaluate(() => ({ w: document.documentElement.scrollWidth, c: document.documentElement.clientWidth }));
    assert(over.w <= over.c, `horizontal overflow at 320 px: ${over.w} > ${over.c}`);
    assert((await text(f, "label[for=issue]")) === "Problème constaté", "French form");
    await shot(p, "bike-card-fr-dark-320");
    await f.$eval("#legend", (d) => { d.open = true; });
    await shot(p, "bike-card-fr-dark-320-legend");
    await f.$eval("#legend", (d) => { d.open = false; });
    await waitVisible(f, "#open-case");
    await f.focus("#open-case");
    await keys(p, "Enter");
    const tl = await viewFrame(p, "investigation-case");
    await waitText(tl, "#title", /^Dossier IC-/);
    await waitText(tl, "#next", /^Inspecté : un gestionnaire de flotte clôt maintenant le dossier/);
    assert((await tl.$$eval("#timeline li", (ls) => ls.map((l) => l.textContent))).some((x) => x.includes("Inspection enregistrée")), "French step");
    assert((await tl.$$eval("#timeline li", (ls) => ls.map((l) => l.textContent))).some((x) => x.includes("État Disponible → Indisponible")), "French status change");
    const tlOver = await tl.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
    assert(tlOver, "the timeline overflows at 320 px");
    await shot(p, "case-timeline-fr-dark-320");
  } finally {
    await p.close();
  }
});

// Files a report from the card as `who` with the keyboard alone and checks that the answer is
// shown in words (matching re), announced, and that nothing is written; returns the page.
async function refusedReport(who, re, o) {
  const p = await openHost(who, o);
  const before = psql(`SELECT count(*) FROM fleet.damage_reports`);
  await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
  const f = await viewFrame(p, "get_bike_status");
  await waitText(f, "#title", new RegExp(`^Bike ${BIKE}$`));
  await waitVisible(f, "#open-report");
  await f.focus("#open-report");
  await keys(p, "Enter", "Tab");
  await p.keyboard.type(`${who} tries to report`);
  await keys(p, "Tab", "Enter", "Tab", "Enter");
  const msg = await waitText(f, "#message", re);
  assert((await f.$eval("#message", (e) => e.getAttribute("role"))) === "alert", "announced as an alert");
  assert(psql(`SELECT count(*) FROM fleet.damage_reports`) === before, "a report was written");
  return { p, msg };
}

await check("a user who may not report (dev via developer-ide) is not offered \"Report damage\" and is told what they can do", async () => {
  const p = await openHost("dev");
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#title", new RegExp(`^Bike ${BIKE}$`));
    await waitVisible(f, "#next-readonly");
    assert(/^You can see this bike, but you cannot report damage from here: your account or this app is not allowed to report\.$/.test(await text(f, "#next-readonly")), `the read-only note: ${await text(f, "#next-readonly")}`);
    await assertPlain(f, "the read-only card");
    assert(!(await visible(f, "#open-report")) && !(await visible(f, "#next-report")), "Report damage is offered to dev");
    await shot(p, "bike-card-read-only");
  } finally {
    await p.close();
  }
});

await check("a mistyped bike id ends the waiting with the server's words; an id of the wrong shape with the card's own", async () => {
  const p = await openHost("marie");
  try {
    await p.evaluate(() => window.bikarooHost.callTool("get_bike_status", { bikeId: "VL-999999" }));
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#problem", /^Bike VL-999999 could not be shown: .*VL-999999 was not found/);
    assert(!(await visible(f, "#loading")) && !(await visible(f, "#card")), "still waiting, or a card shown");
    assert((await f.$eval("#problem", (e) => e.getAttribute("role"))) === "alert", "announced as an alert");
    await shot(p, "bike-card-not-found");
    await p.evaluate(() => window.bikarooHost.callTool("get_bike_status", { bikeId: "VL 2048" }));
    const g = await viewFrame(p, "get_bike_status", 1);
    // Said as a person would, not as the schema's pattern.
    await waitText(g, "#problem", /^“VL 2048” is not a bike id: bike ids look like VL-2048 \(VL-, then 4 to 6 digits\)\.$/);
    assert(!(await visible(g, "#loading")), "still waiting after an invalid id");
    await assertPlain(f, "a bike not found");
    await assertPlain(g, "an id of the wrong shape");
  } finally {
    await p.close();
  }
});

await check("a case id of the wrong shape, or a case the caller cannot see, ends the timeline's waiting in words", async () => {
  const p = await openHost("marie");
  try {
    await p.evaluate(() => window.bikarooHost.openResource("bikaroo://cases/IC-12"));
    const a = await viewFrame(p, "investigation-case");
    await waitText(a, "#message", /^The case could not be shown: “IC-12” is not a case id/);
    await p.evaluate(() => window.bikarooHost.openResource("bikaroo://cases/IC-999999999"));
    const b = await viewFrame(p, "investigation-case", 1);
    await waitText(b, "#message", /^The case could not be shown: Case IC-999999999 was not found among the cases you can see\.$/);
    await shot(p, "case-timeline-not-found");
  } finally {
    await p.close();
  }
});

await check("an application that must confirm on the server's side: the card says so in words and nothing is written", async () => {
  // This host declares no elicitation, so the server cannot ask: it says what it needs.
  const { p, msg } = await refusedReport("careful", /confirm/i);
  try {
    assert(/^Nothing was reported: reports made from this app must be confirmed by you, and this app cannot ask you\./.test(msg), msg);
    await assertPlain(await viewFrame(p, "get_bike_status"), "a report this app cannot confirm");
  } finally {
    await p.close();
  }
});

await check("a host that hands the server's confirmation request to the view: the card asks with Confirm and Cancel, and acts on the answer", async () => {
  const p = await openHost("careful", { elicit: "manual" });
  const said = `Confirmed in the card ${randomUUID()}`;
  const reports = () => psql(`SELECT count(*) FROM fleet.damage_reports WHERE description = ${quote(said)}`);
  const declined = () => psql(`SELECT count(*) FROM fleet.audit_log WHERE client_id = 'careful-assistant' AND outcome = 'declined' AND target = ${quote(BIKE)}`);
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#title", new RegExp(`^Bike ${BIKE}$`));
    await waitVisible(f, "#open-report");
    await f.focus("#open-report");
    await keys(p, "Enter", "ArrowDown", "Tab"); // flat_tire
    await p.keyboard.type(said);
    await keys(p, "Tab", "Enter", "Tab", "Enter"); // Review, Send
    // The question, in the card: what is asked, and both answers, with the focus on it.
    await waitVisible(f, "#ask");
    await waitText(f, "#ask-text", /^Bikaroo asks you to confirm this report before filing it: Flat tire on bike VL-\d+\. Check the details above\.$/);
    assert((await focused(f)) === "ask", `the question takes the focus: ${await focused(f)}`);
    assert((await text(f, "#ask-confirm")) === "Confirm and file the report" && (await text(f, "#ask-cancel")) === "Cancel", "Confirm and Cancel");
    assert(!(await visible(f, "#send")), "Send is offered while the question waits for an answer");
    assert(reports() === "0", "a report was written before it was confirmed");
    await assertPlain(f, "the confirmation asked");
    await shot(p, "bike-card-confirmation-asked");
    // Cancel: the server is told, writes nothing, and the card says so.
    const before = Number(declined());
    await keys(p, "Tab", "Tab", "Enter");
    await waitText(f, "#message", /^Nothing was reported: you cancelled it\.$/);
    assert(!(await visible(f, "#ask")), "the question stays after Cancel");
    assert(reports() === "0", "a cancelled report was written");
    assert(Number(declined()) === before + 1, "the server was not told the report was cancelled");
    // Send again, then Confirm: filed once, through the server's confirmation.
    await f.focus("#send");
    await keys(p, "Enter");
    await waitVisible(f, "#ask");
    await keys(p, "Tab", "Enter");
    await waitText(f, "#message", /^Report DR-\d+ filed/);
    const rows = psql(`SELECT reported_via || ' ' || issue FROM fleet.damage_reports WHERE description = ${quote(said)}`).split("\n");
    assert(rows.length === 1 && rows[0] === "careful-assistant flat_tire", `reports: ${rows}`);
    assert(!(await visible(f, "#ask")), "the question stays after Confirm");
    await assertPlain(f, "the report confirmed");
  } finally {
    await p.close();
  }
});

await check("the server's question reads in French, in the dark theme at 320 px, in plain words", async () => {
  const p = await openHost("careful", { elicit: "manual", locale: "fr-FR", theme: "dark", width: 320 });
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#title", new RegExp(`^Vélo ${BIKE}$`));
    await waitVisible(f, "#open-report");
    await f.focus("#open-report");
    await keys(p, "Enter", "ArrowDown", "ArrowDown", "Tab", "Tab", "Enter", "Tab", "Enter"); // brake_failure, Review, Send
    await waitVisible(f, "#ask");
    await waitText(f, "#ask-text", /^Bikaroo vous demande de confirmer ce signalement avant de l’enregistrer : Freins défaillants sur le vélo VL-\d+\. Vérifiez les détails ci-dessus\.$/);
    assert((await text(f, "#ask-confirm")) === "Confirmer et enregistrer le signalement" && (await text(f, "#ask-cancel")) === "Annuler", "Confirmer et Annuler");
    await assertPlain(f, "la question du serveur");
    assert((await brokenIds(f)).length === 0 && !(await overflows(f)), "an id broken or the card wider than 320 px");
    await shot(p, "bike-card-confirmation-asked-fr-dark-320");
    await keys(p, "Tab", "Tab", "Enter"); // Annuler
    await waitText(f, "#message", /^Rien n’a été signalé : vous l’avez annulé\.$/);
  } finally {
    await p.close();
  }
});

await check("a host that asks its user and is told yes: the report is filed once after the server's confirmation", async () => {
  const p = await openHost("careful", { elicit: "accept" });
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#title", new RegExp(`^Bike ${BIKE}$`));
    const said = `Confirmed through the host ${randomUUID()}`;
    await f.focus("#open-report");
    await keys(p, "Enter", "Tab");
    await p.keyboard.type(said);
    await keys(p, "Tab", "Enter", "Tab", "Enter");
    await waitText(f, "#message", /^Report DR-\d+ filed/);
    const asked = (await p.evaluate(() => window.hostLog)).filter((e) => e.event === "elicitation");
    // The host showed the server's question, in the user's words: the bike and its region by
    // name, never the application's id or the tool.
    assert(asked.length === 1 && asked[0].detail.includes(BIKE) && asked[0].detail.includes("(Paris)")
      && !/careful-assistant|report_damaged_bike|act as/.test(asked[0].detail), JSON.stringify(asked));
    const rows = psql(`SELECT reported_via FROM fleet.damage_reports WHERE description = ${quote(said)}`).split("\n");
    assert(rows.length === 1 && rows[0] === "careful-assistant", `reports: ${rows}`);
  } finally {
    await p.close();
  }
});

await check("markup a user typed in a report is shown as text in the card and the timeline, never run", async () => {
  const p = await openHost("marie");
  try {
    const said = `<img src=x onerror="document.title='ran'"><b>bold</b> ${randomUUID()}`;
    const args = { bikeId: BIKE, issue: "other", description: said, idempotencyKey: randomUUID() };
    await p.evaluate((a) => window.bikarooHost.callTool("report_damaged_bike", a), args);
    const card = await viewFrame(p, "report_damaged_bike");
    await waitText(card, "#message", /^Report DR-\d+ filed/);
    await card.focus("#open-case");
    await keys(p, "Enter");
    const tl = await viewFrame(p, "investigation-case");
    await waitText(tl, "#timeline", new RegExp(said.slice(-36)));
    const quotes = await tl.$$eval("#timeline .quote", (qs) => qs.map((q) => q.textContent));
    assert(quotes.includes(said), `the description is not shown as typed: ${JSON.stringify(quotes)}`);
    for (const f of [card, tl]) {
      assert((await f.$$("img, b")).length === 0, "the markup became elements");
      assert((await f.evaluate(() => document.title)) !== "ran", "the markup ran");
    }
  } finally {
    await p.close();
  }
});

await check("Send again after a lost answer: the report is filed once, with the same idempotencyKey", async () => {
  const p = await openHost("marie", { lose: true });
  try {
    await p.evaluate((id) => window.bikarooHost.callTool("get_bike_status", { bikeId: id }), BIKE);
    const f = await viewFrame(p, "get_bike_status");
    await waitText(f, "#title", new RegExp(`^Bike ${BIKE}$`));
    const said = `Answer lost once ${randomUUID()}`;
    await f.focus("#open-report");
    await keys(p, "Enter", "Tab");
    await p.keyboard.type(said);
    await keys(p, "Tab", "Enter", "Tab", "Enter");
    await waitText(f, "#message", /^The report could not be sent: .*connection was lost.*\. Send it again: it will not be filed twice\.$/);
    assert(psql(`SELECT count(*) FROM fleet.damage_reports WHERE description = ${quote(said)}`) === "1", "the lost answer's report is written");
    await f.$eval("#send", (b) => b.click()); // the user tries again
    await waitText(f, "#message", /^Report DR-\d+ filed/);
    const rows = psql(`SELECT k.idem_key FROM fleet.damage_reports r JOIN fleet.idempotent_calls k ON k.result->>'report_id' = r.report_id WHERE r.description = ${quote(said)}`).split("\n");
    const lost = (await p.evaluate(() => window.hostLog)).filter((e) => e.event === "answer-lost");
    assert(rows.length === 1, `${rows.length} reports filed for one report sent twice`);
    assert(lost.length === 1 && lost[0].detail === rows[0], `keys: lost ${JSON.stringify(lost)}, stored ${rows}`);
  } finally {
    await p.close();
  }
});

await browser.close();
server.close();
console.log(`# ui pass ${passed}`);
console.log(`# ui fail ${failed}`);
process.exit(failed ? 1 : 0);
