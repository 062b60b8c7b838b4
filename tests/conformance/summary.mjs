// Summarises one conformance run directory (-o DIR) for docs/contributing.md: scored scenarios that pass
// cleanly (no failure, no warning), scored checks passed / failed / warnings, and how many
// scenarios the requirement set runs without scoring them (extensions, pending).
// Usage: node summary.mjs RUN_DIR REQUIREMENTS SUITE_INDEX_JS
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [dir, req, suite] = process.argv.slice(2);
const listing = execFileSync(process.execPath, [suite, 'list', '--requirements', req]).toString();
const scored = new Set(
  [...listing.split('Client scenarios')[0].matchAll(/^ {2}- (\S+)/gm)].map((m) => m[1]),
);
let clean = 0, total = 0, passed = 0, failed = 0, warned = 0, notScored = 0;
for (const d of fs.readdirSync(dir)) {
  const f = path.join(dir, d, 'checks.json');
  if (!fs.existsSync(f)) continue;
  const scenario = d.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
  if (!scored.has(scenario)) { notScored++; continue; }
  const checks = JSON.parse(fs.readFileSync(f, 'utf8'));
  const count = (s) => checks.filter((c) => c.status === s).length;
  total++;
  if (count('FAILURE') + count('WARNING') === 0) clean++;
  passed += count('SUCCESS');
  failed += count('FAILURE');
  warned += count('WARNING');
}
console.log(`scenarios ${clean}/${total} clean, checks ${passed} passed / ${failed} failed / ` +
  `${warned} warnings (scored); ${notScored} more run unscored`);
