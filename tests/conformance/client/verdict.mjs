// node verdict.mjs RESULTS_DIR EXPECTED_CHECKS_JSON BASELINE_YML REQUIREMENTS_YML: the verdict of run.sh client on
// the results the conformance runner wrote with `-o RESULTS_DIR` (RESULTS_DIR/<scenario>-<time>/
// checks.json, auth scenarios under RESULTS_DIR/auth/).
//
// A scenario passes when it has no FAILURE and no WARNING check AND every check id that
// expected-checks.json lists for it is present (a client that does nothing passes some scenarios
// with no check at all). Every scenario listed there must have run. A scenario in the baseline
// (`- scenario  # reason`, or `- scenario:check-id  # reason` for one check) must fail as the
// baseline says: one that passes is a stale entry and fails the run, as a new failure does. Each
// baseline entry needs its reason as a comment on its line.
//
// Prints one line per scenario (checks passed / failed / warnings, the expected ids absent) and
// the totals, also over the scenarios REQUIREMENTS_YML scores (its `client` list). A scenario the
// requirement set runs but does not score (`not_scored`: the auth extensions) and that
// expected-checks.json does not list is reported without a verdict. Exits 0 when the run matches the baseline, 1 otherwise.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from '../alpha/node_modules/yaml/dist/index.js';

const [resultsDir, expectedPath, baselinePath, requirementsPath] = process.argv.slice(2);
if (!requirementsPath) {
  console.error('usage: node verdict.mjs RESULTS_DIR EXPECTED_CHECKS_JSON BASELINE_YML REQUIREMENTS_YML');
  process.exit(2);
}

// Expected ids per scenario, "@group" expanded and "-id" removed.
function expectedChecks() {
  const { groups, scenarios } = JSON.parse(readFileSync(expectedPath, 'utf8'));
  const out = new Map();
  for (const [scenario, items] of Object.entries(scenarios)) {
    const ids = new Set();
    for (const item of items) {
      if (item.startsWith('@')) {
        if (!groups[item.slice(1)]) throw new Error(`${scenario}: unknown group ${item}`);
        for (const id of groups[item.slice(1)]) ids.add(id);
      }
    }
    for (const item of items) {
      if (item.startsWith('-')) ids.delete(item.slice(1));
      else if (!item.startsWith('@')) ids.add(item);
    }
    out.set(scenario, [...ids]);
  }
  return out;
}

// The baseline's entries; each line holding one must carry a "# reason".
function baseline() {
  const text = readFileSync(baselinePath, 'utf8');
  const doc = parse(text) ?? {};
  const entries = (doc.client ?? []).map(String);
  const problems = [];
  for (const entry of entries) {
    const line = text.split('\n').find((l) => l.replace(/#.*/, '').trim() === `- ${entry}`);
    if (!line || !/#\s*\S/.test(line)) problems.push(`baseline entry "${entry}" has no "# reason" on its line`);
  }
  const whole = new Set(entries.filter((e) => !e.includes(':')));
  const perCheck = new Map();
  for (const e of entries.filter((x) => x.includes(':'))) {
    const [scenario, id] = [e.slice(0, e.indexOf(':')), e.slice(e.indexOf(':') + 1)];
    if (!perCheck.has(scenario)) perCheck.set(scenario, new Set());
    perCheck.get(scenario).add(id);
  }
  return { whole, perCheck, problems };
}

// scenario name -> checks, from every checks.json under the results directory.
function results() {
  const out = new Map();
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (!statSync(path).isDirectory()) continue;
      let checks;
      try {
        checks = JSON.parse(readFileSync(join(path, 'checks.json'), 'utf8'));
      } catch {
        walk(path);
        continue;
      }
      const scenario = relative(resultsDir, path).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
      out.set(scenario, checks);
    }
  };
  walk(resultsDir);
  return out;
}

const expected = expectedChecks();
const { whole, perCheck, problems } = baseline();
const ran = results();
const bad = (c) => c.status === 'FAILURE' || c.status === 'WARNING';
const requirements = parse(readFileSync(requirementsPath, 'utf8'));
const scored = new Set(requirements.client);
const unscored = new Set((requirements.not_scored ?? []).filter((e) => e.leg === 'client')
  .map((e) => e.scenario));
const totals = { scenarios: 0, passed: 0, failed: 0, warnings: 0 };
const scoredTotals = { ...totals };
const errors = [...problems];

for (const [scenario, ids] of expected) {
  const checks = ran.get(scenario);
  if (!checks) {
    errors.push(`${scenario}: did not run (no checks.json)`);
    continue;
  }
  const count = (s) => checks.filter((c) => c.status === s).length;
  const [passed, failed, warnings] = [count('SUCCESS'), count('FAILURE'), count('WARNING')];
  for (const t of scored.has(scenario) ? [totals, scoredTotals] : [totals]) {
    t.scenarios += 1;
    t.passed += passed;
    t.failed += failed;
    t.warnings += warnings;
  }
  const present = new Set(checks.map((c) => c.id));
  const missing = ids.filter((id) => !present.has(id));
  const excused = perCheck.get(scenario) ?? new Set();
  const offending = [...new Set([...checks.filter(bad).map((c) => c.id), ...missing])];
  const ok = offending.length === 0;
  const tail = missing.length > 0 ? `; expected but absent: ${missing.join(', ')}` : '';
  const mark = ok ? '✓' : '✗';
  const note = whole.has(scenario) ? ' (baselined)' : '';
  console.log(`${mark} ${scenario}: ${passed} passed, ${failed} failed, ${warnings} warnings${tail}${note}`);
  if (whole.has(scenario)) {
    if (ok) errors.push(`${scenario}: passes but is in the baseline (remove the entry)`);
    continue;
  }
  for (const id of offending.filter((x) => !excused.has(x))) {
    errors.push(`${scenario}:${id}: ${missing.includes(id) ? 'absent' : 'fails'} and is not in the baseline`);
  }
  for (const id of [...excused].filter((x) => !offending.includes(x))) {
    errors.push(`${scenario}:${id}: passes but is in the baseline (remove the entry)`);
  }
}
for (const [scenario, checks] of ran) {
  if (expected.has(scenario)) continue;
  if (!unscored.has(scenario)) {
    errors.push(`${scenario}: ran but expected-checks.json does not list it`);
    continue;
  }
  const n = (s) => checks.filter((c) => c.status === s).length;
  console.log(`- ${scenario}: ${n('SUCCESS')} passed, ${n('FAILURE')} failed, ` +
              `${n('WARNING')} warnings (not scored: no verdict)`);
}
for (const entry of [...whole, ...perCheck.keys()]) {
  if (!expected.has(entry)) errors.push(`baseline entry ${entry}: no such scenario in expected-checks.json`);
}

const line = (t) => `${t.scenarios} scenarios: ${t.passed} passed, ${t.failed} failed, ` +
    `${t.warnings} warnings (${t.passed + t.failed + t.warnings} checks)`;
console.log(`\nTotal over ${line(totals)}`);
console.log(`Scored by the requirement set: ${line(scoredTotals)}`);
if (errors.length > 0) {
  console.log('\nVerdict: FAILED');
  for (const e of errors) console.log(`  ✗ ${e}`);
  process.exit(1);
}
console.log('\nVerdict: every scenario passes, or fails as its baseline entry says');
