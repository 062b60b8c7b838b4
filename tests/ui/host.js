// The test host (tests/ui): a web page that renders Bikaroo's MCP Apps views the way a host that
// implements the extension does, built on the extension's own host-side bridge (AppBridge from
// @modelcontextprotocol/ext-apps/app-bridge) and the official client (@modelcontextprotocol/client),
// which declares the extension. Bundled for the browser by browser.mjs (rolldown).
//
// Per the extension (specification 2026-01-26, "Sandbox proxy"): each view runs in a sandbox proxy
// on another origin (sandbox.html, served with the Content Security Policy the host must apply),
// which loads the view's HTML into an inner frame and relays messages. The host talks to the view
// only through the bridge; the bridge forwards the view's tools/call and resources/read to the
// server through the client.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const UI_EXTENSION = "io.modelcontextprotocol/ui";
const HOST_INFO = { name: "bikaroo-ui-test-host", version: "1.0.0" };
const params = new URLSearchParams(location.search);
const options = {
  mcp: new URL(params.get("mcp") || "/mcp", location.href),
  sandbox: params.get("sandbox"),
  locale: params.get("locale") || "en-US",
  theme: params.get("theme") || "light",
  width: Number(params.get("width") || 600),
  // Server-side confirmations (input_required with a form elicitation): "" this host declares
  // no elicitation; "accept" it asks its user, who accepts; "manual" it hands them to the view.
  elicit: params.get("elicit") || "",
  // "1": the first report_damaged_bike's answer is lost after the server answered it.
  lose: params.get("lose") === "1",
};
const STYLES = {
  light: { "--color-background-primary": "#ffffff", "--color-text-primary": "#111111" },
  dark: { "--color-background-primary": "#121417", "--color-text-primary": "#f5f5f5" },
};

// What happened, for the test to read (window.hostLog).
const hostLog = [];
window.hostLog = hostLog;
const log = (event, detail) => hostLog.push({ event, detail });

let client;
let tools;
let templates;

async function connect() {
  const capabilities = { extensions: { [UI_EXTENSION]: { mimeTypes: [RESOURCE_MIME_TYPE] } } };
  if (options.elicit) capabilities.elicitation = { form: {} };
  client = new Client(HOST_INFO, {
    capabilities,
    versionNegotiation: { mode: { pin: "2026-07-28" } },
    inputRequired: { autoFulfill: options.elicit !== "manual" },
  });
  if (options.elicit === "accept") {
    client.setRequestHandler("elicitation/create", async (request) => {
      log("elicitation", request.params.message);
      return { action: "accept", content: { confirm: true } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(options.mcp));
  tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]));
  templates = (await client.listResourceTemplates()).resourceTemplates;
  log("connected", { tools: [...tools.keys()] });
}

async function readView(uri) {
  const res = await client.readResource({ uri });
  const content = res.contents[0];
  if (res.contents.length !== 1 || content.mimeType !== RESOURCE_MIME_TYPE)
    throw new Error(`${uri}: not one ${RESOURCE_MIME_TYPE} content`);
  return { html: content.text, ui: content._meta?.ui ?? {} };
}

// Loads the sandbox proxy (another origin) into a new iframe and waits for it to be ready.
function loadSandbox(name, ui) {
  const frame = document.createElement("iframe");
  frame.dataset.view = name;
  frame.title = name;
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  frame.style.width = `${options.width}px`;
  frame.style.height = "200px";
  frame.style.border = ui.prefersBorder ? "1px solid #888" : "none";
  const ready = new Promise((resolve) => {
    const onMessage = (ev) => {
      if (ev.source === frame.contentWindow && ev.data?.method === "ui/notifications/sandbox-proxy-ready") {
        window.removeEventListener("message", onMessage);
        resolve();
      }
    };
    window.addEventListener("message", onMessage);
  });
  const url = new URL(options.sandbox);
  if (ui.csp) url.searchParams.set("csp", JSON.stringify(ui.csp));
  frame.src = url.href;
  document.getElementById("views").append(frame);
  return ready.then(() => frame);
}

// Renders the view at uri in a sandboxed frame, connected to the server through the bridge, and
// gives it input (the tool's arguments). Returns the bridge once the view is initialized.
async function render(name, uri, input) {
  const view = await readView(uri);
  const frame = await loadSandbox(name, view.ui);
  const caps = client.getServerCapabilities() ?? {};
  const bridge = new AppBridge(
    client,
    HOST_INFO,
    { openLinks: {}, serverTools: caps.tools ?? {}, serverResources: caps.resources ?? {}, logging: {} },
    {
      hostContext: {
        theme: options.theme,
        locale: options.locale,
        timeZone: "Europe/Paris",
        platform: "web",
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        containerDimensions: { maxWidth: options.width },
        styles: { variables: STYLES[options.theme] },
      },
    },
  );
  bridge.onsizechange = ({ height }) => {
    if (height != null) frame.style.height = `${height + 2}px`;
  };
  bridge.onopenlink = async ({ url }) => {
    log("open-link", url);
    await openResource(url);
    return {};
  };
  bridge.onmessage = async (p) => {
    log("message", p);
    return {};
  };
  const initialized = new Promise((resolve) => bridge.addEventListener("initialized", resolve));
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  if (options.elicit === "manual") {
    // This host leaves the server's questions to the view: the view's tools/call hands them
    // back, and the view's retry carries the answers (inputResponses and requestState, which
    // the SDK lifts out of the params into the handler's context) to the server (set after
    // connect(), which installs the bridge's plain forwarding).
    bridge.oncalltool = (p, extra) => {
      const retry = {};
      if (extra.mcpReq.inputResponses) retry.inputResponses = extra.mcpReq.inputResponses;
      const state = extra.mcpReq.requestState?.();
      if (state !== undefined) retry.requestState = state;
      if (retry.inputResponses) log("answer", retry.inputResponses);
      return client.request({ method: "tools/call", params: { ...p, ...retry } }, { allowInputRequired: true, signal: extra.mcpReq.signal });
    };
  }
  if (options.lose) {
    let lost = false;
    bridge.oncalltool = async (p, extra) => {
      const r = await client.request({ method: "tools/call", params: p }, { signal: extra.mcpReq.signal });
      if (p.name === "report_damaged_bike" && !lost) {
        lost = true;
        log("answer-lost", p.arguments?.idempotencyKey);
        throw new Error("the connection was lost before the answer");
      }
      return r;
    };
  }
  await bridge.sendSandboxResourceReady({ html: view.html, csp: view.ui.csp, permissions: view.ui.permissions });
  await initialized;
  log("initialized", name);
  await bridge.sendToolInput({ arguments: input });
  return bridge;
}

// A tool call as an agent's host makes it: the view of the tool (if any) gets the input, then
// the result.
async function callTool(name, args) {
  const tool = tools.get(name);
  const uri = tool && getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name} has no view`);
  const bridge = await render(name, uri, args);
  const result = await client.callTool({ name, arguments: args });
  await bridge.sendToolResult(result);
  log("tool-result", { name, isError: !!result.isError });
  return result;
}

// A link to a resource of a template whose descriptor names a view (_meta.ui.resourceUri): the
// view is opened with the template's variable as input (it reads the resource itself).
async function openResource(url) {
  for (const t of templates) {
    const m = /^(.*)\{([A-Za-z]+)\}$/.exec(t.uriTemplate);
    const viewUri = t._meta?.ui?.resourceUri;
    if (m && viewUri && url.startsWith(m[1]) && url.length > m[1].length) {
      await render(t.name, viewUri, { [m[2]]: url.slice(m[1].length) });
      return;
    }
  }
  throw new Error(`no view for ${url}`);
}

window.bikarooHost = { connect, callTool, openResource };
log("loaded", options);
