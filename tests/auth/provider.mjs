// A real OAuth 2.1 authorization server for the tests (npm oidc-provider, pinned in
// tests/package.json), bound to 127.0.0.1. Started only by its supervisor tests/auth/as.mjs
// (which takes the same arguments), to which it reports its port over the IPC channel.
//
// Besides the provider's own endpoints (RFC 8414 metadata, JWKS, /auth, /token, introspection),
// it serves test-only helpers on the same origin:
//   GET /mint?sub=marie&client=customer-care-assistant&scope=fleet:read&resource=URI
//       runs a real authorization code + PKCE flow (with the RFC 8707 resource indicator)
//       and answers the token endpoint's JSON (access_token, id_token, scope).
//       A client id the provider does not know is registered on the spot as a public client
//       (what `bikaroo-mcp admin client` added to the database gets tokens too: the server,
//       not this provider, judges the client application).
//   GET /mint?grant=client_credentials&client=fleet-sync&scope=fleet:read&resource=URI
//       client credentials (a machine token: sub = client_id; fleet-sync and ops-batch only).
//   A flow that fails answers {"error": "..."} in words, never the provider's HTML page.
//   GET /forge?kind=KIND[&sub=..&client=..&scope=..&exp_in=SECONDS]
//       hand-made tokens for adversarial tests, some signed with the provider's real keys
//       (valid signature, wrong claims), some not (alg none, HS256 with the public key, ...).
//       exp_in sets a valid token's lifetime (default 600 s). kind=valid_rotated: signed with
//       the newest key /rotate added.
//   GET /rotate
//       the issuer rotates its keys: a new RSA key (kid rsa-2, then rsa-3...) joins the published
//       key set (the old ones stay published, as during a real rotation); answers {"kid": ...}.
//   GET /slow?path=PATH&ms=MS
//       from now on PATH (e.g. /jwks, /token/introspection) answers MS milliseconds late, as an
//       identity provider under load would (ms=0: at once again).
//   GET /stats
//       what the server under test fetched: {"jwks": key-set downloads, "introspections": N}.
// Logins are scripted through the provider's interaction API (login_hint names the account):
// no browser, no devInteractions.
import crypto from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';
import * as jose from 'jose';

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
}

const resourceUri = arg('resource');
const format = arg('format', 'jwt');
const port = Number(arg('port', '0'));
// docker-compose.yml's demo identity provider: --listen 0.0.0.0 in its container, an --issuer
// that every other container reaches on its own loopback, and --demo: /mint only (no /forge).
const listenAddr = arg('listen', '127.0.0.1');
const fixedIssuer = arg('issuer');
const demo = process.argv.includes('--demo');
const OTHER_RESOURCE = 'https://other-api.bikaroo.test/api';
const REDIRECT = 'http://127.0.0.1/cb';
if (!process.send || !resourceUri) {
  console.error('provider.mjs is started by tests/auth/as.mjs, which takes its arguments');
  process.exit(2);
}
// The supervisor gone (killed, or it gave up on this start): nothing is left to serve.
process.on('disconnect', () => process.exit(0));

// Keys: one RSA (RS256) and one P-256 (ES256), both published in the JWKS.
const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsaJwk = { ...rsa.privateKey.export({ format: 'jwk' }), kid: 'rsa-1', use: 'sig', alg: 'RS256' };
const ecJwk = { ...ec.privateKey.export({ format: 'jwk' }), kid: 'ec-1', use: 'sig', alg: 'ES256' };
// Progress on stderr: a start that hangs shows in the test's failure message where it stopped.
console.error(`as: keys ready after ${Math.round(process.uptime() * 1000)} ms`);

const publicClients = ['customer-care-assistant', 'ops-assistant', 'developer-ide', 'careful-assistant',
  'unregistered-app'].map((id) => ({
  client_id: id,
  token_endpoint_auth_method: 'none',
  redirect_uris: [REDIRECT],
  grant_types: ['authorization_code'],
  response_types: ['code'],
}));
const SECRETS = { 'fleet-sync': 'fleet-sync-secret', 'ops-batch': 'ops-batch-secret', 'bikaroo-mcp': 'bikaroo-mcp-secret' };
const confidential = Object.entries(SECRETS).map(([id, secret]) => ({
  client_id: id,
  client_secret: secret,
  token_endpoint_auth_method: 'client_secret_basic',
  redirect_uris: [],
  grant_types: ['client_credentials'],
  response_types: [],
}));

let issuer; // known once listening
const stats = { jwks: 0, introspections: 0 }; // what was fetched, for the coalescing tests
const rotated = []; // keys added by /rotate: { key (private), jwk (public) }, newest last
const delays = new Map(); // path -> milliseconds it answers late (/slow)
// The published key set once /rotate added keys: the provider's own public keys and the new ones.
const publicJwk = (key, kid, alg) => ({ ...key.export({ format: 'jwk' }), kid, use: 'sig', alg });
let provider;

function buildProvider() {
  return new Provider(issuer, {
    clients: [...publicClients, ...confidential],
    jwks: { keys: [rsaJwk, ecJwk] },
    scopes: ['openid', 'fleet:read', 'fleet:report'],
    claims: { openid: ['sub'] },
    pkce: { required: () => true },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (resource !== resourceUri && resource !== OTHER_RESOURCE) throw new Error('unknown resource');
          return {
            scope: 'fleet:read fleet:report',
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: format,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: { AccessToken: 600, ClientCredentials: 600, IdToken: 600, Grant: 600, Interaction: 600, Session: 600 },
  });
}

// Scripted interaction: log in as login_hint, grant what was asked.
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: String(params.login_hint) } },
      { mergeWithLastSubmission: false });
    return;
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingResourceScopes) {
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
  }
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

// A public client for id unless the provider knows it (static or registered before).
async function ensurePublicClient(id) {
  if (!id || await provider.Client.find(id)) return;
  await provider.Client.adapter.upsert(id, {
    client_id: id,
    token_endpoint_auth_method: 'none',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code'],
    response_types: ['code'],
  });
}

// The words of an error page (oidc-provider's HTML: <strong>error</strong>: x ...), or the text.
function errorWords(text) {
  const field = (name) => text.match(new RegExp(`<strong>${name}</strong>:\\s*([^<\\n]*)`))?.[1]?.trim();
  const error = field('error');
  if (error) return `${error}${field('error_description') ? ` (${field('error_description')})` : ''}`;
  return text.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 300);
}

// Follows the authorization flow with a cookie jar, as a browser would, until the redirect URI.
async function authorizationCodeFlow({ sub, client, scope, resource }) {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const jar = new Map();
  const q = new URLSearchParams({
    client_id: client, response_type: 'code', redirect_uri: REDIRECT, scope: `openid ${scope}`.trim(),
    code_challenge: challenge, code_challenge_method: 'S256', login_hint: sub, state: 's1', prompt: 'consent',
  });
  if (resource) q.set('resource', resource);
  let url = `${issuer}/auth?${q}`;
  for (let hop = 0; hop < 10; hop++) {
    const r = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    });
    for (const c of r.headers.getSetCookie()) {
      const [kv] = c.split(';');
      const i = kv.indexOf('=');
      jar.set(kv.slice(0, i), kv.slice(i + 1));
    }
    const loc = r.headers.get('location');
    if (!loc) throw new Error(`authorization flow stopped at ${r.status}: ${errorWords(await r.text())}`);
    const next = new URL(loc, url);
    if (next.href.startsWith(REDIRECT)) {
      const err = next.searchParams.get('error');
      if (err) throw new Error(`authorization error ${err}: ${next.searchParams.get('error_description')}`);
      const body = new URLSearchParams({ grant_type: 'authorization_code', code: next.searchParams.get('code'),
        redirect_uri: REDIRECT, code_verifier: verifier, client_id: client });
      if (resource) body.set('resource', resource);
      const t = await fetch(`${issuer}/token`, { method: 'POST', body });
      return { status: t.status, json: await t.json() };
    }
    url = next.href;
  }
  throw new Error('too many redirects');
}

async function clientCredentials({ client, scope, resource }) {
  const body = new URLSearchParams({ grant_type: 'client_credentials', scope });
  if (resource) body.set('resource', resource);
  const auth = Buffer.from(`${client}:${SECRETS[client]}`).toString('base64');
  const t = await fetch(`${issuer}/token`, { method: 'POST', body, headers: { authorization: `Basic ${auth}` } });
  return { status: t.status, json: await t.json() };
}

// ---- forged tokens --------------------------------------------------------------------------

const b64 = (o) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');

function claims(q, over = {}) {
  const now = Math.floor(Date.now() / 1000);
  const c = {
    iss: issuer, sub: q.get('sub') || 'marie', aud: resourceUri, client_id: q.get('client') || 'customer-care-assistant',
    scope: q.get('scope') ?? 'fleet:read fleet:report', iat: now, exp: now + Number(q.get('exp_in') ?? 600),
    jti: crypto.randomUUID(),
  };
  return { ...c, ...over };
}

async function signWith(key, alg, header, payload) {
  return new jose.CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader({ alg, ...header }).sign(key);
}

async function forge(q) {
  const now = Math.floor(Date.now() / 1000);
  const kind = q.get('kind');
  const realRsa = rsa.privateKey;
  const at = { typ: 'at+jwt', kid: 'rsa-1' };
  switch (kind) {
    case 'valid': return signWith(realRsa, 'RS256', at, claims(q));
    case 'valid_es256': return signWith(ec.privateKey, 'ES256', { typ: 'at+jwt', kid: 'ec-1' }, claims(q));
    case 'valid_rotated': {
      if (!rotated.length) throw new Error('no rotated key: GET /rotate first');
      const r = rotated[rotated.length - 1];
      return signWith(r.key, 'RS256', { typ: 'at+jwt', kid: r.jwk.kid }, claims(q));
    }
    case 'typ_application': return signWith(realRsa, 'RS256', { ...at, typ: 'application/AT+JWT' }, claims(q));
    case 'role_claims': return signWith(realRsa, 'RS256', at,
      claims(q, { role: 'fleet_operator', regions: ['FR-PAR', 'FR-LYO', 'BE-BRU'], subject: 'olivia' }));
    case 'aud_array': return signWith(realRsa, 'RS256', at, claims(q, { aud: ['https://other-api.bikaroo.test/api', resourceUri] }));
    case 'expired': return signWith(realRsa, 'RS256', at, claims(q, { iat: now - 7200, exp: now - 3600 }));
    case 'nbf_future': return signWith(realRsa, 'RS256', at, claims(q, { nbf: now + 3600 }));
    case 'iat_future': return signWith(realRsa, 'RS256', at, claims(q, { iat: now + 3600, exp: now + 7200 }));
    case 'no_exp': { const c = claims(q); delete c.exp; return signWith(realRsa, 'RS256', at, c); }
    case 'no_iat': { const c = claims(q); delete c.iat; return signWith(realRsa, 'RS256', at, c); }
    case 'no_aud': { const c = claims(q); delete c.aud; return signWith(realRsa, 'RS256', at, c); }
    case 'no_sub': { const c = claims(q); delete c.sub; return signWith(realRsa, 'RS256', at, c); }
    case 'no_jti': { const c = claims(q); delete c.jti; return signWith(realRsa, 'RS256', at, c); }
    case 'no_client': { const c = claims(q); delete c.client_id; return signWith(realRsa, 'RS256', at, c); }
    case 'wrong_aud': return signWith(realRsa, 'RS256', at, claims(q, { aud: 'https://other-api.bikaroo.test/api' }));
    case 'aud_prefix': return signWith(realRsa, 'RS256', at, claims(q, { aud: `${resourceUri}/extra` }));
    case 'wrong_iss': return signWith(realRsa, 'RS256', at, claims(q, { iss: 'https://evil.example.com' }));
    case 'typ_jwt': return signWith(realRsa, 'RS256', { typ: 'JWT', kid: 'rsa-1' }, claims(q));
    case 'no_typ': return signWith(realRsa, 'RS256', { kid: 'rsa-1' }, claims(q));
    case 'crit': { // jose refuses to sign an unknown crit: sign by hand
      const head = `${b64({ alg: 'RS256', ...at, crit: ['bikaroo-ext'], 'bikaroo-ext': 1 })}.${b64(claims(q))}`;
      return `${head}.${crypto.sign('sha256', Buffer.from(head), realRsa).toString('base64url')}`;
    }
    case 'jku': return signWith(realRsa, 'RS256', { ...at, jku: 'http://127.0.0.1:1/jwks' }, claims(q));
    case 'x5u': return signWith(realRsa, 'RS256', { ...at, x5u: 'http://127.0.0.1:1/cert' }, claims(q));
    case 'jwk_embedded': {
      const attacker = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const jwk = attacker.publicKey.export({ format: 'jwk' });
      return signWith(attacker.privateKey, 'RS256', { typ: 'at+jwt', jwk }, claims(q));
    }
    case 'unknown_key_known_kid': {
      const attacker = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      return signWith(attacker.privateKey, 'RS256', at, claims(q));
    }
    case 'unknown_kid': return signWith(realRsa, 'RS256', { typ: 'at+jwt', kid: 'rotated-away' }, claims(q));
    case 'alg_none': return `${b64({ alg: 'none', typ: 'at+jwt', kid: 'rsa-1' })}.${b64(claims(q))}.`;
    case 'hs256_pubkey': {
      const pem = rsa.publicKey.export({ format: 'pem', type: 'spki' });
      const head = `${b64({ alg: 'HS256', typ: 'at+jwt', kid: 'rsa-1' })}.${b64(claims(q))}`;
      return `${head}.${crypto.createHmac('sha256', pem).update(head).digest('base64url')}`;
    }
    case 'rs256_as_es256': {
      // A real RS256 signature presented under the EC key's id and ES256.
      const t = await signWith(realRsa, 'RS256', at, claims(q));
      const [, p, s] = t.split('.');
      return `${b64({ alg: 'ES256', typ: 'at+jwt', kid: 'ec-1' })}.${p}.${s}`;
    }
    case 'tampered': {
      const t = await signWith(realRsa, 'RS256', at, claims(q));
      const [h, , s] = t.split('.');
      return `${h}.${b64(claims(q, { sub: 'olivia' }))}.${s}`;
    }
    case 'jwe_like': return `${b64({ alg: 'RSA-OAEP', enc: 'A256GCM' })}.a.b.c.d`;
    default: throw new Error(`unknown kind ${kind}`);
  }
}

// ---- the HTTP server ------------------------------------------------------------------------

function send(res, status, obj) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(obj));
}

const server = http.createServer(async (req, res) => {
  const u = new URL(req.url, issuer);
  try {
    if (u.pathname.startsWith('/interaction/')) return await interaction(req, res);
    if (u.pathname === '/mint') {
      const q = u.searchParams;
      const spec = { sub: q.get('sub'), client: q.get('client'), scope: q.get('scope') ?? '', resource: q.get('resource') ?? resourceUri };
      if (spec.resource === '') spec.resource = undefined;
      const machine = q.get('grant') === 'client_credentials';
      if (machine && !SECRETS[spec.client]) {
        return send(res, 400, { error: `no machine client ${spec.client}: this provider's are ${Object.keys(SECRETS).join(', ')}` });
      }
      if (!machine) await ensurePublicClient(spec.client);
      const r = machine ? await clientCredentials(spec) : await authorizationCodeFlow(spec);
      return send(res, r.status, r.json);
    }
    if (demo && ['/forge', '/stats', '/rotate', '/slow'].includes(u.pathname)) return send(res, 404, { error: 'not in --demo' });
    if (u.pathname === '/forge') return send(res, 200, { access_token: await forge(u.searchParams) });
    if (u.pathname === '/stats') return send(res, 200, stats);
    if (u.pathname === '/slow') {
      delays.set(u.searchParams.get('path'), Number(u.searchParams.get('ms') ?? 0));
      return send(res, 200, Object.fromEntries(delays));
    }
    if (u.pathname === '/rotate') {
      const kid = `rsa-${rotated.length + 2}`;
      const k = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      rotated.push({ key: k.privateKey, jwk: publicJwk(k.publicKey, kid, 'RS256') });
      return send(res, 200, { kid });
    }
    // Counted when asked, before any delay: a test sees that a fetch is under way.
    if (u.pathname === '/token/introspection') stats.introspections += 1;
    if (u.pathname === '/jwks') stats.jwks += 1;
    const late = delays.get(u.pathname);
    if (late) await new Promise((r) => { setTimeout(r, late); });
    if (u.pathname === '/jwks') {
      if (rotated.length) {
        return send(res, 200, { keys: [publicJwk(rsa.publicKey, 'rsa-1', 'RS256'),
          publicJwk(ec.publicKey, 'ec-1', 'ES256'), ...rotated.map((r) => r.jwk)] });
      }
    }
  } catch (e) {
    return send(res, 500, { error: String(e?.message ?? e) });
  }
  return provider.callback()(req, res);
});

server.listen(port, listenAddr, () => {
  issuer = fixedIssuer ?? `http://127.0.0.1:${server.address().port}`;
  provider = buildProvider();
  provider.on('server_error', (_ctx, err) => console.error('as: server_error', err));
  process.send({ port: server.address().port });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
