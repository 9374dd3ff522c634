// node failed-checks.mjs RESULTS_DIR: prints every FAILURE and WARNING check that the conformance
// runner wrote with `-o RESULTS_DIR` (one RESULTS_DIR/server-<scenario>-<timestamp>/checks.json
// per scenario), with its error message and details, so a CI log shows the exact request and
// response behind a failure. A WARNING is listed too: a baseline run counts it as a failure.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const limit = 2000;
console.log('--- FAILURE and WARNING checks (scenarios the run does not score, such as the alpha\'s ' +
  'server-sse-polling, do not affect the result) ---');
let entries = [];
try {
  entries = readdirSync(dir).sort();
} catch {
  console.log(`(no results in ${dir})`);
}
for (const entry of entries) {
  let checks;
  try {
    checks = JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8'));
  } catch {
    continue;
  }
  const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
  for (const check of checks) {
    if (check.status !== 'FAILURE' && check.status !== 'WARNING') continue;
    console.log(`${check.status} ${scenario}:${check.id}: ${check.errorMessage ?? check.description}`);
    if (check.details !== undefined) {
      const details = JSON.stringify(check.details);
      console.log(`  details: ${details.length > limit ? `${details.slice(0, limit)}...` : details}`);
    }
  }
}
