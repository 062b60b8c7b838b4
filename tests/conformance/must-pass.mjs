// Scenarios that a requirement set runs without scoring them (an extension's) but that a server
// must pass all the same: each named scenario ran in the run directory (-o DIR), and none of its
// checks failed or warned (a check the suite itself skips is shown, not counted as a failure).
// Prints one line per scenario; exits 1 when one is missing or did not pass.
// Usage: node must-pass.mjs RUN_DIR SCENARIO...
import fs from 'node:fs';
import path from 'node:path';

const [dir, ...wanted] = process.argv.slice(2);
const runs = new Map();
for (const d of fs.readdirSync(dir)) {
  const f = path.join(dir, d, 'checks.json');
  if (fs.existsSync(f)) runs.set(d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, ''), f);
}
let bad = 0;
for (const name of wanted) {
  const f = runs.get(name);
  if (!f) {
    console.log(`  ${name}: did not run`);
    bad++;
    continue;
  }
  const checks = JSON.parse(fs.readFileSync(f, 'utf8'));
  const by = (s) => checks.filter((c) => c.status === s);
  const wrong = [...by('FAILURE'), ...by('WARNING')];
  const skipped = by('SKIPPED').length;
  if (wrong.length) bad++;
  console.log(`  ${name}: ${wrong.length ? 'FAILED' : 'passed'}, ${by('SUCCESS').length} checks passed` +
    (skipped ? `, ${skipped} skipped by the suite` : '') +
    wrong.map((c) => `\n    ${c.status} ${c.id}: ${(c.errorMessage ?? '').slice(0, 300)}`).join(''));
}
process.exit(bad ? 1 : 0);
