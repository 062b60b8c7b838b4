// crossing.mjs CASES.json: for each case of tests/contracts/rule-cases.json, what the official
// client's own JSON Schema validator (the one Client.callTool checks structuredContent with)
// says of each answer: against its own version's schema (own: must be valid) and against the
// other version's (crossed: the rolling upgrade). Prints one JSON object per case.
import { readFileSync } from 'node:fs';
import { DefaultJsonSchemaValidator } from '@modelcontextprotocol/client/_shims';

const { cases } = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const validator = new DefaultJsonSchemaValidator();
for (const c of cases) {
  const check = { old: validator.getValidator(c.old), new: validator.getValidator(c.new) };
  const out = { name: c.name, own: [], crossed: [] };
  for (const [mine, other] of [['old', 'new'], ['new', 'old']]) {
    for (const a of c.answers[mine]) {
      const own = check[mine](a);
      if (!own.valid) out.own.push(`${mine} answer ${JSON.stringify(a)}: ${own.errorMessage}`);
      const crossed = check[other](a);
      if (!crossed.valid) out.crossed.push(`${mine} answer ${JSON.stringify(a)} against the ${other} schema: ${crossed.errorMessage}`);
    }
  }
  console.log(JSON.stringify(out));
}
