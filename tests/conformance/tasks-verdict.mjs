// node tasks-verdict.mjs RESULTS_DIR BASELINE: the tasks extension's scenarios (tasks-*), which the
// runner runs with --requirements 2026-07-28 but does not score, required whole: exit 1 when one
// of them is missing from RESULTS_DIR, ended without checks (other than
// tasks-status-notifications, which this suite version skips), or has a check that is not
// SUCCESS, SKIPPED or INFO, unless BASELINE (the run's baseline file) lists it as
// `- scenario:check-id`.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const expected = [
  'tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields',
  'tasks-request-state-removal', 'tasks-mrtr-input', 'tasks-request-headers',
  'tasks-dispatch-and-envelope', 'tasks-status-notifications', 'tasks-required-task-error',
  'tasks-mrtr-composition',
];
const dir = process.argv[2];
const allowed = new Set(
  readFileSync(process.argv[3], 'utf8').split('\n')
    .map((line) => line.match(/^\s*-\s*(tasks-[\w-]+:[\w-]+)\s*$/)?.[1])
    .filter(Boolean));
const seen = new Map();
for (const entry of readdirSync(dir)) {
  const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
  if (!scenario.startsWith('tasks-')) continue;
  try {
    seen.set(scenario, JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8')));
  } catch {
    seen.set(scenario, null);
  }
}
let failed = 0;
let passed = 0;
for (const scenario of expected) {
  const checks = seen.get(scenario);
  if (!checks) {
    console.log(`tasks verdict: ${scenario} did not run`);
    failed++;
    continue;
  }
  const bad = checks.filter((c) => !['SUCCESS', 'SKIPPED', 'INFO'].includes(c.status) &&
    !allowed.has(`${scenario}:${c.id}`));
  const good = checks.filter((c) => c.status === 'SUCCESS').length;
  if (good === 0 && scenario !== 'tasks-status-notifications') {
    console.log(`tasks verdict: ${scenario} passed no check`);
    failed++;
  }
  for (const c of bad) {
    console.log(`tasks verdict: ${c.status} ${scenario}:${c.id}: ${c.errorMessage ?? c.description}`);
    failed++;
  }
  passed += good;
}
console.log(`tasks verdict: ${passed} checks of the tasks-* scenarios passed, ${failed} problem(s)`);
process.exit(failed === 0 ? 0 : 1);
