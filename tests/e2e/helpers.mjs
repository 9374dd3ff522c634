// Helpers shared by the end-to-end tests: bounded waits, the /proc marker scan, and
// meta-tool result checks.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Rejects with a labelled error if `promise` does not settle within `ms`. */
export async function within(ms, label, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${label}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `predicate` (sync or async) until it returns a truthy value or `ms` elapse. On
 * timeout the message carries `describeLast()` of the last state, when given.
 */
export async function waitFor(ms, label, predicate, describeLast) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await predicate();
    if (last) return last;
    if (Date.now() >= deadline) {
      const shown = describeLast ? `; last: ${await describeLast()}` : '';
      throw new Error(`timed out after ${ms} ms waiting for ${label}${shown}`);
    }
    await sleep(25);
  }
}

/**
 * Live processes whose environment holds `name=value` and whose command line mentions
 * server-everything. Processes of other users (unreadable environ) and processes that
 * vanish mid-scan are skipped; zombies have an empty environ and do not count.
 */
export async function markedEverythingProcesses(name, value) {
  const needle = `${name}=${value}`;
  const found = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = (await readFile(`/proc/${entry}/environ`, 'latin1')).split('\0');
      if (!environ.includes(needle)) continue;
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'latin1')).split('\0').join(' ');
      if (cmdline.includes('server-everything')) found.push({ pid: Number(entry), cmdline });
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

/** The parsed JSON of content[0].text; it must equal structuredContent when both exist. */
export function textJson(result) {
  assert.ok(Array.isArray(result.content) && result.content.length > 0, 'result has content');
  assert.equal(result.content[0].type, 'text');
  return JSON.parse(result.content[0].text);
}

/** structuredContent of a successful meta-tool result, cross-checked with content[0].text. */
export function structured(result, label) {
  assert.notEqual(result.isError, true, `${label} failed: ${JSON.stringify(result)}`);
  assert.equal(typeof result.structuredContent, 'object', `${label} has structuredContent`);
  assert.deepEqual(textJson(result), result.structuredContent,
    `${label}: content[0].text carries the same JSON as structuredContent`);
  return result.structuredContent;
}

/**
 * Starts `binary serve --no-discover --config configFile` as the official SDK client's stdio
 * server and connects. Returns the transport, the client, `stderr` (its `text` grows as
 * sluice writes) and `stderrEnded` (resolves when sluice's stderr closes).
 */
export async function startSluice({ Client, StdioClientTransport, binary, configFile, workDir,
  clientName, timeoutMs }) {
  const transport = new StdioClientTransport({
    command: binary,
    args: ['serve', '--no-discover', '--config', configFile],
    env: { ...process.env, HOME: workDir },
    cwd: workDir,
    stderr: 'pipe',
  });
  // The PassThrough exists before start(), so no early output is lost.
  const stderr = { text: '' };
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (chunk) => { stderr.text += chunk; });
  const stderrEnded = new Promise((resolve) => transport.stderr.once('end', resolve));
  const client = new Client({ name: clientName, version: '1.0.0' });
  await within(timeoutMs + 5_000, 'connect + initialize',
    client.connect(transport, { timeout: timeoutMs }));
  return { transport, client, stderr, stderrEnded };
}
