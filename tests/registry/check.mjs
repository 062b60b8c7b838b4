// tests/registry/check.mjs SERVER_JSON VERSION DOCKERFILE: the MCP Registry entry against the
// registry's published JSON Schema of 2025-12-11 (server.schema.2025-12-11.json beside this file,
// pinned by its SHA-256), the product's one version, and the container image's label. Prints
// `ok - ` / `not ok - ` lines; exits 1 on a failure.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

const [serverJsonPath, version, dockerfile] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const SCHEMA_URL = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';
// The bytes published at SCHEMA_URL: a schema file that is not them fails here.
const SCHEMA_SHA256 = '3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0';
let failures = 0;
const check = (what, ok, why = '') => {
  console.log(`${ok ? 'ok' : 'not ok'} - ${what}${ok || !why ? '' : `: ${why}`}`);
  if (!ok) failures++;
};

const schemaBytes = readFileSync(join(here, 'server.schema.2025-12-11.json'));
const sha = createHash('sha256').update(schemaBytes).digest('hex');
check(`the schema is the registry's of 2025-12-11 as published (SHA-256 ${sha.slice(0, 12)}...)`,
  sha === SCHEMA_SHA256, `want ${SCHEMA_SHA256}`);
const schema = JSON.parse(schemaBytes);
check('its $id is the URL server.json names', schema.$id === SCHEMA_URL, schema.$id);

// strict: false: Ajv's strict mode judges how a schema is written ("example", required names
// under anyOf), and this one is the registry's as published; validation itself is unchanged.
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validate = ajv.compile(schema);
const errors = (doc) => (validate(doc) ? '' : ajv.errorsText(validate.errors));

const entry = JSON.parse(readFileSync(serverJsonPath, 'utf8'));
const why = errors(entry);
check(`${serverJsonPath} is valid against the registry's schema`, why === '', why);
check('it names that schema', entry.$schema === SCHEMA_URL, entry.$schema);
check(`its version is the product's (common/version.h: ${version})`, entry.version === version,
  entry.version);
const remote = (entry.remotes ?? []).find((r) => r.type === 'streamable-http');
check('it lists a remote Streamable HTTP server at https://HOST/mcp',
  !!remote && /^https:\/\/[^/]+\/mcp$/.test(remote.url), JSON.stringify(entry.remotes));
const oci = (entry.packages ?? []).find((p) => p.registryType === 'oci');
check(`it lists the container image of this version (${oci?.identifier})`,
  !!oci && oci.identifier.endsWith(`:${version}`) && oci.transport?.type === 'streamable-http',
  JSON.stringify(entry.packages));
const env = new Set((oci?.environmentVariables ?? []).filter((e) => e.isRequired).map((e) => e.name));
check('the image asks for what the server cannot start without (DATABASE_URL, a secret; the issuer; its URI)',
  env.has('DATABASE_URL') && env.has('BIKAROO_AUTH_ISSUER') && env.has('BIKAROO_RESOURCE_URI') &&
  oci.environmentVariables.find((e) => e.name === 'DATABASE_URL').isSecret === true);

// The image's label names the entry: the registry's check that the image is this server's.
const runtime = readFileSync(dockerfile, 'utf8').split(/^FROM /m).find((s) => / AS runtime\b/.test(s.split('\n')[0]));
const label = runtime?.match(/io\.modelcontextprotocol\.server\.name="([^"]*)"/)?.[1];
check(`the Dockerfile's runtime image carries io.modelcontextprotocol.server.name=${label}`,
  label === entry.name, `server.json names ${entry.name}`);

// The validator bites: entries the registry would refuse are refused here too.
const broken = {
  'without a version': (e) => { delete e.version; },
  'with a description over 100 characters': (e) => { e.description = 'x'.repeat(101); },
  'with a name that is not reverse-DNS/name': (e) => { e.name = 'bikaroo fleet'; },
  'with a remote that is not http(s)': (e) => { e.remotes[0].url = 'ftp://mcp.bikaroo.example/mcp'; },
  "with the version 'latest' for a package": (e) => { e.packages[0].version = 'latest'; },
};
for (const [what, spoil] of Object.entries(broken)) {
  const e = structuredClone(entry);
  spoil(e);
  check(`an entry ${what} is refused by the same validator`, errors(e) !== '');
}
process.exit(failures ? 1 : 0);
