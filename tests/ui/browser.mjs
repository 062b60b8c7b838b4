// Browser tests of the MCP Apps views (tests/ui/suite.sh runs this with the pinned Node 22):
// Debian's Chromium, driven by puppeteer-core, opens a test host page (host.js: the extension's
// AppBridge and the official client) that renders the views of the running product in sandboxed
// frames, and the tests assert what a person sees and what PostgreSQL holds. Prints one
// "ok - ..." / "not ok - ..." line per test. Screenshots go to UI_OUT.
//
// Env: UI_MCP_MARIE, UI_MCP_DEV, UI_MCP_CAREFUL (the /mcp URLs of three products: marie via
// customer-care-assistant, dev via developer-ide, marie via careful-assistant), UI_DB_URL (psql conninfo of the test database, a role that reads every
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
const PRODUCTS = { marie: env("UI_MCP_MARIE"), dev: env("UI_MCP_DEV"), careful: env("UI_MCP_CAREFUL") };
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
// marie's name as PostgreSQL holds it (the views name people, never their ids).
const MARIE = psql("SELECT display_name FROM fleet.principals WHERE subject = 'marie'");

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
  const who = /^\/mcp\/(marie|dev|careful)$/.exec(u.pathname);
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

// What a person reads in a view: the text of every rendered element, except what a user typed
// (.quote) and the values of form fields.
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
await check("a client that declares the extension sees the links and reads both views; one that does not sees neither", async () => {
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
    const tpl = (await withExt.listResourceTemplates()).resourceTemplates.find((t) => t.uriTemplate === "bikaroo://cases/{caseId}");
    assert(tpl?._meta?.ui?.resourceUri === "ui://bikaroo/case-timeline", "the case template links the timeline");
    // Without the extension: the same descriptors as with it, less _meta.ui, and no ui:// rows.
    const strip = (list) => JSON.stringify(list.map((t) => { const c = structuredClone(t); delete c._meta.ui; return c; }));
    assert(strip(a) === JSON.stringify(b), "tools/list without the extension differs from the same list less _meta.ui");
    assert(b.every((t) => !t._meta?.ui), "no _meta.ui without the extension");
    const resWith = (await withExt.listResources()).resources.map((r) => r.uri);
    const resWithout = (await without.listResources()).resources.map((r) => r.uri);
    assert(resWith.includes("ui://bikaroo/bike-card") && resWith.includes("ui://bikaroo/case-timeline"), `listed with: ${resWith}`);
    assert(!resWithout.some((u) => u.startsWith("ui://")), `listed without: ${resWithout}`);
    for (const uri of ["ui://bikaroo/bike-card", "ui://bikaroo/case-timeline"]) {
      const r = await withExt.readResource({ uri });
      const c = r.contents[0];
      assert(c.mimeType === MIME && /^<!DOCTYPE html>/i.test(c.text) && c._meta?.ui?.prefersBorder === true, `${uri} as read`);
      assert(!/(src|href)\s*=\s*["']?(https?:)?\/\//i.test(c.text), `${uri} names an external origin`);
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
  assert((await text(card, "#f-region")) === "FR-PAR", "region");
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
  assert((await text(card, "#c-region")) === "FR-PAR", "region");
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
  await waitText(tl, "#next", new RegExp(`^This case is open\\. A new damage report on bike ${BIKE} is added to it\\.$`));
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
  const step = (who, tool, args) => psql(`SELECT outcome FROM fleet.case_step_as((${quote(who)}, ${quote(who === "tom" ? "ops-assistant" : "customer-care-assistant")},
    ${quote(JSON.stringify(args))}::jsonb, ${quote(tool)}, NULL, encode(sha256(${quote(tool)}::bytea), 'hex'), ${quote("ui-" + tool)}, true,
    ${quote(caseId)}, NULL, NULL)::fleet.write_call)`);
  assert(step("marie", "request_inspection", { caseId, note: "the brakes squeal downhill" }) === "ok", "inspection requested");
  assert(step("tom", "record_inspection", { caseId, finding: "repairable", note: "brake pads worn out" }) === "ok", "inspection recorded");
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

// The card (with its review before sending) and the timeline in both languages, both themes, at
// 320 and 800 px: plain words, ids whole on one line, nothing wider than the frame, and at 800 px
// the width used (what you can do beside the facts). A screenshot of each: views-LANG-THEME-WIDTH.
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
    assert(asked.length === 1 && asked[0].detail.includes(BIKE) && asked[0].detail.includes("careful-assistant"), JSON.stringify(asked));
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
