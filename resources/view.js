// What every Bikaroo view shares, put at the start of each view's <script> when the server loads
// it (the include directive of server/protocol/resources.c): the extension's JSON-RPC over postMessage with the host
// (io.modelcontextprotocol/ui, 2026-01-26), the host's theme, style variables and language, words
// in the person's language (English, or French for fr*), ids kept whole on one line, dates, reads
// through the host, and a step sent through the host's tools/call with the server's own
// confirmation asked in the view. A view calls bikarooView() once, with its name and version, its
// words (labels: {en, fr}, over the shared ones below) and what it does when the host speaks:
// onInput(arguments), onResult(CallToolResult), onCancelled(reason), onContext() (the language or
// theme changed: show everything again), onStart() (connected), onStartFailed(message).
function bikarooView(o) {
  "use strict";
  // Words every view may show: the issues a report names, the statuses in French (English takes
  // the server's labels, bikaroo://fleet/status-codes), a case's steps.
  const SHARED = {
    en: {
      unknown: "unknown",
      issues: {
        rear_wheel_blocked: "Rear wheel blocked", flat_tire: "Flat tire", brake_failure: "Brake failure",
        chain_broken: "Chain broken", battery_fault: "Battery fault", frame_damage: "Frame damage",
        lighting_fault: "Lighting fault", other: "Other"
      },
      statuses: {},
      steps: { open: "open", inspection_requested: "inspection requested", inspected: "inspected",
               awaiting_approval: "write-off awaiting approval", closed: "closed" }
    },
    fr: {
      unknown: "inconnu",
      issues: {
        rear_wheel_blocked: "Roue arrière bloquée", flat_tire: "Pneu crevé", brake_failure: "Freins défaillants",
        chain_broken: "Chaîne cassée", battery_fault: "Batterie défectueuse", frame_damage: "Cadre endommagé",
        lighting_fault: "Éclairage défectueux", other: "Autre"
      },
      statuses: {
        available: "Disponible", in_use: "En location", reserved: "Réservé", unavailable: "Indisponible",
        in_repair: "En réparation", lost: "Perdu", retired: "Retiré"
      },
      steps: { open: "ouvert", inspection_requested: "inspection demandée", inspected: "inspecté",
               awaiting_approval: "mise au rebut à approuver", closed: "clos" }
    }
  };
  const LABELS = {
    en: Object.assign({}, SHARED.en, o.labels.en),
    fr: Object.assign({}, SHARED.fr, o.labels.fr)
  };
  // The server needs the host to ask the user, and the host cannot (MCP 2026-07-28).
  const MISSING_CAPABILITY = -32021;
  // Ids as the views show them (VL-2048, IC-1001, DR-8001, PAR-006, FR-PAR).
  const IDS = /\b(?:[A-Z]{2,3}-[0-9]+|[A-Z]{2}-[A-Z]{3})\b/g;
  const $ = (id) => document.getElementById(id);
  let lang = "en";
  let ctx = {};

  // The view's words for key, {name} replaced by vars' values (English when French lacks it;
  // undefined when neither has it).
  const t = (key, vars) => {
    let s = LABELS[lang][key] ?? LABELS.en[key];
    if (typeof s !== "string") return s;
    for (const [k, v] of Object.entries(vars || {})) s = s.split("{" + k + "}").join(String(v));
    return s;
  };
  // The text as nodes, each id in it wrapped so that it never breaks at its hyphen.
  function withIds(text) {
    const parts = [];
    let last = 0;
    for (const m of String(text).matchAll(IDS)) {
      if (m.index > last) parts.push(String(text).slice(last, m.index));
      const id = document.createElement("span");
      id.className = "id";
      id.textContent = m[0];
      parts.push(id);
      last = m.index + m[0].length;
    }
    parts.push(String(text).slice(last));
    return parts;
  }
  const put = (node, text) => node.replaceChildren(...withIds(text));
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.append(...withIds(text));
    return e;
  };
  // bikaroo://fleet/status-codes as read through the host ([{code, label, rentable}]).
  let statusCodes = [];
  // A status as a person reads it: the host's language, else the server's label (the status
  // codes', else fallback), else its code.
  const statusName = (code, fallback) => (LABELS[lang].statuses || {})[code]
    || (statusCodes.find((s) => s.code === code) || {}).label || fallback || code;

  // ---- JSON-RPC over postMessage with the host (the extension's transport) ----
  let nextId = 1;
  const pending = new Map();
  const post = (msg) => window.parent.postMessage(msg, "*");
  function request(method, params) {
    const id = nextId++;
    post({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  const notify = (method, params) => post({ jsonrpc: "2.0", method, params });
  const call = (fn, ...args) => { if (fn) fn(...args); };
  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent) return;
    const m = ev.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(Object.assign(new Error(m.error.message || "error " + m.error.code), { code: m.error.code }));
      else p.resolve(m.result);
      return;
    }
    const p = m.params || {};
    if (m.method === "ui/notifications/tool-result") call(o.onResult, p);
    else if (m.method === "ui/notifications/tool-input") call(o.onInput, p.arguments || {});
    else if (m.method === "ui/notifications/tool-cancelled") call(o.onCancelled, p.reason || "");
    else if (m.method === "ui/notifications/host-context-changed") applyContext(p);
    else if (m.method === "ui/resource-teardown" || m.method === "ping") post({ jsonrpc: "2.0", id: m.id, result: {} });
    else if (m.id !== undefined) post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
  });

  // ---- the host's context: theme, style variables, language ----
  function translate() {
    document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
  }
  function applyContext(c) {
    ctx = Object.assign({}, ctx, c);
    const root = document.documentElement;
    if (c.theme === "light" || c.theme === "dark") root.dataset.theme = c.theme;
    const vars = c.styles && c.styles.variables;
    if (vars) for (const [k, v] of Object.entries(vars)) if (k.startsWith("--") && typeof v === "string") root.style.setProperty(k, v);
    if (c.locale) {
      lang = /^fr\b/i.test(c.locale) ? "fr" : "en";
      root.lang = lang;
      translate();
    }
    call(o.onContext);
  }

  // ---- dates, in the host's language and time zone ----
  const fmtTime = (iso) => {
    const d = new Date(iso);
    if (!iso || isNaN(d)) return iso || t("unknown");
    try { return new Intl.DateTimeFormat(ctx.locale || lang, { dateStyle: "medium", timeStyle: "short", timeZone: ctx.timeZone || undefined }).format(d); }
    catch (e) { return d.toISOString(); }
  };
  // "3 hours ago", "il y a 3 heures".
  function fmtAgo(iso) {
    const d = Date.parse(iso);
    if (isNaN(d)) return t("unknown");
    const secs = (d - Date.now()) / 1000;
    const units = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["minute", 60]];
    const [unit, size] = units.find(([, n]) => Math.abs(secs) >= n) || ["second", 1];
    try { return new Intl.RelativeTimeFormat(ctx.locale || lang, { numeric: "auto" }).format(Math.round(secs / size), unit); }
    catch (e) { return fmtTime(iso); }
  }

  // ---- through the host ----
  // A resource's JSON, read through the host (resources/read).
  async function readJson(uri) {
    const res = await request("resources/read", { uri });
    const c = res && res.contents && res.contents[0];
    return JSON.parse(c && c.text);
  }
  // The tools this caller may use (bikaroo://catalog lists them per caller: scope, role, client
  // application); null when the catalogue cannot be read (then everything is offered and the
  // server decides, as for every call).
  async function readTools() {
    try {
      const cat = await readJson("bikaroo://catalog");
      const caps = Array.isArray(cat) ? cat : (cat && cat.capabilities) || [];
      return new Set(caps.filter((c) => c.kind === "tool").map((c) => c.name));
    } catch (e) {
      return null;
    }
  }
  // The status codes with their labels (statusName uses them); the list as it stands when they
  // cannot be read.
  async function readStatusCodes() {
    try {
      const codes = await readJson("bikaroo://fleet/status-codes");
      const list = Array.isArray(codes) ? codes : (codes && (codes.statusCodes || codes.codes)) || [];
      if (list.length) statusCodes = list.filter((s) => s && s.code);
    } catch (e) { /* statuses are said by their codes' words in the view's language, else codes */ }
    return statusCodes;
  }
  const textOf = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  const freshKey = () => (crypto.randomUUID ? crypto.randomUUID()
    : Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join(""));

  // A write through the host's tools/call, the server's own confirmation (an input_required
  // answer the host hands back) asked in the view: the question (#ask, #ask-text, with
  // #ask-confirm and #ask-cancel) takes the place of the review's actions while it waits for the
  // person, and either answer goes back through the host as the retry MCP 2026-07-28 defines (the
  // same call and arguments, inputResponses, the echoed requestState). Only yes/no form questions
  // are answered here; anything else is not, and nothing is done. c: actions (the id of the
  // review's actions), busy (the ids of the buttons held while a call is out), say(text, kind)
  // (what the view says happened), question(tool, args) (the question in the view's words),
  // taken(result) (whether the step is done), done(tool, args, result), refused(text, result)
  // (the server's words, and its result when it answered). The view's words: sending, declined, cannotConfirmHere, cannotAnswer,
  // sendFailed.
  function confirmation(c) {
    let asking = null;
    async function submit(tool, args, answer) {
      const buttons = c.busy.map($);
      buttons.forEach((b) => { b.disabled = true; });
      const params = { name: tool, arguments: args };
      if (answer) {
        params.inputResponses = answer.responses;
        if (answer.state != null) params.requestState = answer.state;
      }
      const declining = !!(answer && answer.declined);
      if (!declining) c.say(t("sending"));
      try {
        const r = await request("tools/call", params);
        if (r && r.resultType === "input_required" && !declining) ask(tool, args, r);
        else if (declining) end(t("declined"), "");
        else if (r && !r.isError && c.taken(r)) { end(); await c.done(tool, args, r); }
        else { end(); c.refused(textOf(r || {}), r); }
      } catch (e) {
        // Nothing is done without the person's yes, whatever became of a Cancel.
        if (declining) end(t("declined"), "");
        else if (e.code === MISSING_CAPABILITY) end(t("cannotConfirmHere"), "error");
        else end(t("sendFailed", { text: String(e.message).replace(/\.$/, "") }), "error");
      } finally {
        buttons.forEach((b) => { b.disabled = false; });
      }
    }
    function ask(tool, args, r) {
      const answers = {};
      for (const [key, q] of Object.entries(r.inputRequests || {})) {
        const p = (q && q.params) || {};
        const fields = (p.requestedSchema && p.requestedSchema.properties) || {};
        const yesNo = Object.values(fields).every((f) => f && f.type === "boolean");
        if (q.method !== "elicitation/create" || (p.mode && p.mode !== "form") || !yesNo) {
          end(t("cannotAnswer"), "error");
          return;
        }
        answers[key] = Object.keys(fields);
      }
      if (!Object.keys(answers).length) { end(t("cannotAnswer"), "error"); return; }
      asking = { tool, args, state: r.requestState, answers };
      put($("ask-text"), c.question(tool, args));
      c.say("");
      $(c.actions).hidden = true;
      $("ask").hidden = false;
      $("ask").focus();
    }
    // The question is over (answered, or the step ended otherwise): text, if any, says how.
    function end(text, kind) {
      const wasAsking = !$("ask").hidden;
      asking = null;
      $("ask").hidden = true;
      $(c.actions).hidden = false;
      if (text !== undefined) c.say(text, kind);
      if (wasAsking) $("send").focus();
    }
    function answer(accept) {
      const a = asking;
      if (!a) return;
      const responses = {};
      for (const [key, fields] of Object.entries(a.answers))
        responses[key] = accept ? { action: "accept", content: Object.fromEntries(fields.map((f) => [f, true])) } : { action: "decline" };
      submit(a.tool, a.args, { responses, state: a.state, declined: !accept });
    }
    $("ask-confirm").addEventListener("click", () => answer(true));
    $("ask-cancel").addEventListener("click", () => answer(false));
    return { send: (tool, args) => submit(tool, args, null), end };
  }

  // The host fits the frame to the content (the body, not the frame it is in).
  new ResizeObserver(() => {
    const r = document.body.getBoundingClientRect();
    notify("ui/notifications/size-changed", { width: Math.ceil(r.width), height: Math.ceil(r.height) });
  }).observe(document.body);

  // Shown in English until the host says its language; then connected.
  function start() {
    translate();
    call(o.onContext);
    request("ui/initialize", {
      appInfo: { name: o.name, version: o.version },
      appCapabilities: { availableDisplayModes: ["inline"] },
      protocolVersion: "2026-01-26"
    }).then((res) => {
      applyContext((res && res.hostContext) || {});
      notify("ui/notifications/initialized", {});
      call(o.onStart);
    }, (e) => call(o.onStartFailed, e.message));
  }

  return {
    $, t, put, el, withIds, statusName, request, readJson, readTools, readStatusCodes, textOf, freshKey,
    fmtTime, fmtAgo, confirmation, start,
    lang: () => lang,
    openLink: (url) => request("ui/open-link", { url })
  };
}
