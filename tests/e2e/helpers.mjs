// Helpers shared by the end-to-end tests: bounded waits, the /proc marker scan, meta-tool
// result checks, and starting/stopping `sluice serve` (stdio through the SDK, or HTTP).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Rejects with a labelled error if `promise` does not settle within `ms`. */
// The gateway.* meta-tools sluice lists in meta mode, sorted.
export const META_TOOLS = [
  'gateway.cancel',
  'gateway.catalog_search',
  'gateway.connect_server',
  'gateway.describe',
  'gateway.disconnect_server',
  'gateway.health',
  'gateway.invoke',
  'gateway.list_pending',
  'gateway.refresh',
  'gateway.restart_server',
];

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
 * Live processes whose environment holds `name=value` (and, when `cmdlineIncludes` is given,
 * whose command line contains it). Processes of other users (unreadable environ) and
 * processes that vanish mid-scan are skipped; zombies have an empty environ and do not count.
 */
export async function markedProcesses(name, value, cmdlineIncludes = undefined) {
  const needle = `${name}=${value}`;
  const found = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = (await readFile(`/proc/${entry}/environ`, 'latin1')).split('\0');
      if (!environ.includes(needle)) continue;
      const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'latin1')).split('\0').join(' ');
      if (cmdlineIncludes === undefined || cmdline.includes(cmdlineIncludes)) {
        found.push({ pid: Number(entry), cmdline });
      }
    } catch {
      // gone, or not ours
    }
  }
  return found;
}

/**
 * Live processes whose environment holds `name=value` and whose command line mentions
 * server-everything (see markedProcesses).
 */
export async function markedEverythingProcesses(name, value) {
  return markedProcesses(name, value, 'server-everything');
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
 * Starts `binary serve --no-discover --config configFile` (then `args`) as the official SDK
 * client's stdio server, `env` added to its environment, and connects; `capabilities` are the
 * client's, and `prepare(client)` runs before it connects (to set request handlers). Returns
 * the transport, the client, `stderr` (its `text` grows as sluice writes) and `stderrEnded`
 * (resolves when sluice's stderr closes).
 */
export async function startSluice({ Client, StdioClientTransport, binary, configFile, workDir,
  clientName, timeoutMs, args = [], env = {}, capabilities, prepare }) {
  const transport = new StdioClientTransport({
    command: binary,
    args: ['serve', '--no-discover', '--config', configFile, ...args],
    env: { ...process.env, HOME: workDir, ...env },
    cwd: workDir,
    stderr: 'pipe',
  });
  // The PassThrough exists before start(), so no early output is lost.
  const stderr = { text: '' };
  transport.stderr.setEncoding('utf8');
  transport.stderr.on('data', (chunk) => { stderr.text += chunk; });
  const stderrEnded = new Promise((resolve) => transport.stderr.once('end', resolve));
  const client = new Client({ name: clientName, version: '1.0.0' },
    capabilities ? { capabilities } : {});
  if (prepare) prepare(client);
  await within(timeoutMs + 5_000, 'connect + initialize',
    client.connect(transport, { timeout: timeoutMs }));
  return { transport, client, stderr, stderrEnded };
}

/**
 * Starts `binary serve --transport http` on a free loopback port (`--port 0`), with its own
 * state directory and `HOME=workDir`, and waits (bounded) for the port file. `args` are
 * appended (e.g. `['--expose', 'all']`); `env` is added to the environment. Returns
 * { child, port, url (the /mcp endpoint), base (http://127.0.0.1:port), output ({stdout,
 * stderr} texts that grow), exited (resolves with {code, signal} once the process has exited
 * and its pipes are closed), exitInfo() ({code, signal} or null) }.
 */
export async function startSluiceHttp({ binary, configFile, workDir, args = [], env = {},
  timeoutMs }) {
  const portFile = path.join(workDir, 'port');
  const stateDir = path.join(workDir, 'state');
  await mkdir(stateDir, { recursive: true });
  const child = spawn(binary, [
    'serve', '--transport', 'http', '--host', '127.0.0.1', '--port', '0',
    '--port-file', portFile, '--state-dir', stateDir,
    '--no-discover', '--config', configFile, ...args,
  ], {
    env: { ...process.env, HOME: workDir, ...env },
    cwd: workDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk) => { output.stdout += chunk; });
  child.stderr.on('data', (chunk) => { output.stderr += chunk; });
  let info = null;
  const exited = new Promise((resolve) => {
    // 'close': the process has exited and its stdio streams are closed.
    child.once('close', (code, signal) => { info = { code, signal }; resolve(info); });
  });
  let spawnError = null;
  child.once('error', (err) => { spawnError = err; });

  const story = () => `exit: ${JSON.stringify(info)}; stderr:\n${output.stderr}`;
  const port = await waitFor(timeoutMs, `sluice to write its port file ${portFile}`, async () => {
    if (spawnError) throw new Error(`sluice could not be started: ${spawnError.message}`);
    if (info) throw new Error(`sluice exited before listening; ${story()}`);
    let text;
    try {
      text = await readFile(portFile, 'utf8');
    } catch {
      return null; // not yet
    }
    // Written atomically: complete once it exists. Decimal port, newline.
    assert.match(text, /^\d+\n$/, `port file content: ${JSON.stringify(text)}`);
    const n = Number(text.trim());
    assert.ok(n > 0 && n < 65536, `port ${n} is a TCP port`);
    return n;
  }, async () => story());
  const base = `http://127.0.0.1:${port}`;
  return { child, port, base, url: `${base}/mcp`, output, exited, exitInfo: () => info };
}

/**
 * Sends SIGTERM to a sluice started by startSluiceHttp and waits (bounded) for it to exit;
 * returns {code, signal}. On timeout it sends SIGKILL and throws.
 */
export async function stopSluiceHttp(sluice, timeoutMs) {
  if (!sluice.exitInfo()) sluice.child.kill('SIGTERM');
  try {
    return await within(timeoutMs, 'sluice to exit after SIGTERM', sluice.exited);
  } catch (err) {
    try { sluice.child.kill('SIGKILL'); } catch { /* already gone */ }
    err.message += `; stderr:\n${sluice.output.stderr}`;
    throw err;
  }
}

/**
 * A fetch for StreamableHTTPClientTransport's `fetch` option that records every HTTP
 * exchange in `log`: {method, sessionId (request header), status, contentType,
 * responseSessionId, body (the request body, for POST)}. `status` is absent if the request
 * failed (e.g. aborted by close()).
 */
export function recordingFetch(log) {
  return async (url, init = {}) => {
    const headers = new Headers(init.headers);
    const entry = {
      method: init.method ?? 'GET',
      sessionId: headers.get('mcp-session-id'),
      body: typeof init.body === 'string' ? init.body : undefined,
    };
    log.push(entry);
    const response = await fetch(url, init);
    entry.status = response.status;
    entry.contentType = response.headers.get('content-type');
    entry.responseSessionId = response.headers.get('mcp-session-id');
    return response;
  };
}

/**
 * The safety net after a stdio run's steps (they normally close everything): closes the
 * client, SIGKILLs sluice if it has not exited and every marked process left, removes the
 * work directory. Errors are left to the steps that report them.
 */
export async function cleanUpStdioRun({ client, child, exited, marked, workDir, timeoutMs }) {
  try { await within(timeoutMs, 'client.close (cleanup)', client?.close() ?? Promise.resolve()); } catch { /* reported by the steps */ }
  if (child && !exited) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
  }
  for (const { pid } of await marked()) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  if (workDir) await rm(workDir, { recursive: true, force: true });
}

