// Writes the seed corpora of scripts/fuzz.sh into DIR/corpus-mcp and DIR/corpus-jwt.
// Usage: node tests/fuzz/seeds.mjs DIR
import fs from 'node:fs';

const dir = process.argv[2];
const meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}';
const cases = JSON.parse(fs.readFileSync('tests/protocol/cases.json', 'utf8')).cases;
let n = 0;
for (const c of cases) {
  if (typeof c.body !== 'string') continue;
  const body = c.body.split('$META').join(meta);
  // First byte (fuzz_mcp.c): 0x00 HTTP without metadata headers, 0x0e HTTP with all three,
  // 0x11 stdio in a legacy session, 0x8e HTTP with headers and an SSE-capable emitter.
  for (const flags of [0x00, 0x0e, 0x11, 0x8e]) {
    const headers = flags & 0x0e ? '2026-07-28\0tools/call\0get_bike_status\0' : '';
    fs.writeFileSync(`${dir}/corpus-mcp/seed-${n++}`, Buffer.concat([Buffer.from([flags]), Buffer.from(headers + body)]));
  }
}
// fuzz_jwt.c: 1 = claims signed with the default header, 2 = claims NUL header, 0 = raw token.
const now = 1800000000;
const claims = [
  { iss: 'https://as.example', aud: 'https://fleet.example/mcp', sub: 'marie', client_id: 'customer-care-assistant', scope: 'fleet:read', iat: now - 10, exp: now + 600 },
  { iss: 'https://as.example', aud: ['x', 'https://fleet.example/mcp'], sub: 'a', azp: 'b', iat: now, nbf: now, exp: now + 1 },
];
claims.forEach((c, i) => {
  fs.writeFileSync(`${dir}/corpus-jwt/seed-${i}`, Buffer.concat([Buffer.from([1]), Buffer.from(JSON.stringify(c))]));
  fs.writeFileSync(`${dir}/corpus-jwt/seed-h${i}`,
    Buffer.concat([Buffer.from([2]), Buffer.from(`${JSON.stringify(c)}\0{"alg":"ES256","kid":"k1","typ":"at+jwt"}`)]));
});
fs.writeFileSync(`${dir}/corpus-jwt/seed-raw`, Buffer.from('\0eyJhbGciOiJFUzI1NiJ9.e30.AAAA'));
