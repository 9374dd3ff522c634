// End-to-end test with the real clients (versions pinned in package.json and
// package-lock.json): after `sluice setup --client X` in a fresh HOME, the client's own listing
// command reports sluice connected. Claude Code and Gemini CLI start every server to check it
// (`mcp list`); Codex's `mcp list` only prints its config, so `codex exec` runs one turn against
// a loopback stand-in for the model API (model_stub.mjs) and the test reads the tools Codex
// offered it. Offline: no API key, no network beyond 127.0.0.1, telemetry, auto-update and
// first-run prompts off; each client runs under a timeout in its own process group, and no
// process started under the test's HOME may outlive the test.
//
// Usage: SLUICE_BINARY=... node --test clients.test.mjs    (run.sh; ctest label e2e)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startModelStub } from './model_stub.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const SLUICE = process.env.SLUICE_BINARY;
const BIN = path.join(here, 'node_modules', '.bin');
const timings = [];

// A fresh HOME with a project folder inside it; the marker variable finds leftovers.
function makeHome() {
  const home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-clients-')));
  const work = path.join(home, 'project');
  fs.mkdirSync(work);
  const env = {
    PATH: `${BIN}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    CODEX_HOME: path.join(home, '.codex'),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    // Claude Code: no update check, telemetry, error reports or other non-essential traffic.
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Gemini CLI: do not start itself a second time with a larger heap.
    GEMINI_CLI_NO_RELAUNCH: 'true',
    SLUICE_CLIENTS_E2E: home,
  };
  return { home, work, env };
}

// Runs a command in its own process group with stdin closed; kills the group at the timeout.
function run(command, args, { env, cwd, timeoutMs }) {
  const started = process.hrtime.bigint();
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = Number((process.hrtime.bigint() - started) / 1000000n);
      resolve({ code, signal, stdout, stderr, ms, timedOut });
    });
  });
}

function describe(result) {
  return `exit ${result.code}${result.signal ? ` (${result.signal})` : ''}` +
    `${result.timedOut ? ', timed out' : ''}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
}

// The pids of processes whose environment carries this test's marker (sluice, the clients).
function leftovers(home) {
  const needle = Buffer.from(`SLUICE_CLIENTS_E2E=${home}\0`);
  const found = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/environ`).includes(needle)) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

// Waits (bounded) for every process of the test to end; kills and reports those that do not.
async function assertNothingLeft(home) {
  const deadline = Date.now() + 10000;
  let left = leftovers(home);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = leftovers(home);
  }
  for (const pid of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
  assert.deepEqual(left, [], 'processes left behind by the client or sluice');
}

// `sluice setup --client NAME` in the test's HOME.
async function setup(client, ctx) {
  const result = await run(SLUICE, ['setup', '--client', client], {
    env: ctx.env, cwd: ctx.work, timeoutMs: 30000,
  });
  assert.equal(result.code, 0, `sluice setup --client ${client}: ${describe(result)}`);
  return result;
}

async function withHome(name, body) {
  const ctx = makeHome();
  const started = Date.now();
  try {
    await body(ctx);
  } finally {
    timings.push(`${name}: ${Date.now() - started} ms`);
    await assertNothingLeft(ctx.home);
    fs.rmSync(ctx.home, { recursive: true, force: true });
  }
}

test('the binaries are there', () => {
  assert.ok(SLUICE && fs.existsSync(SLUICE), 'SLUICE_BINARY names the sluice binary');
  for (const client of ['claude', 'gemini', 'codex']) {
    assert.ok(fs.existsSync(path.join(BIN, client)), `${client} is installed (npm ci)`);
  }
  const help = spawnSync(SLUICE, ['setup', '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0, `sluice setup --help: ${help.stderr}`);
  assert.match(help.stdout, /--client/, 'this sluice has the setup command');
});

test('Claude Code lists sluice as connected after sluice setup', { timeout: 180000 }, async () => {
  await withHome('claude-code', async (ctx) => {
    await setup('claude-code', ctx);
    const list = await run('claude', ['mcp', 'list'], { env: ctx.env, cwd: ctx.work, timeoutMs: 90000 });
    assert.equal(list.code, 0, describe(list));
    assert.match(list.stdout, /^sluice: .+ - [✓✔] Connected$/m, describe(list));
  });
});

test('Gemini CLI lists sluice as connected after sluice setup', { timeout: 240000 }, async () => {
  await withHome('gemini', async (ctx) => {
    // What a user has before setup: settings of their own, and this folder trusted (Gemini CLI
    // starts no server, user-level ones included, in a folder the user has not trusted).
    const settings = path.join(ctx.home, '.gemini', 'settings.json');
    fs.mkdirSync(path.dirname(settings), { recursive: true });
    fs.writeFileSync(settings, JSON.stringify({
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
    }, null, 2));
    fs.writeFileSync(path.join(ctx.home, '.gemini', 'trustedFolders.json'),
      JSON.stringify({ [ctx.work]: 'TRUST_FOLDER' }));
    await setup('gemini', ctx);
    const kept = JSON.parse(fs.readFileSync(settings, 'utf8'));
    assert.equal(kept.privacy?.usageStatisticsEnabled, false, 'setup keeps the other settings');
    const list = await run('gemini', ['mcp', 'list'], { env: ctx.env, cwd: ctx.work, timeoutMs: 150000 });
    assert.equal(list.code, 0, describe(list));
    // Gemini CLI prints its listing on stderr.
    assert.match(list.stdout + list.stderr, /[✓✔] sluice: .+ \(stdio\) - Connected/, describe(list));
  });
});

test('Codex lists sluice and offers its tools to the model after sluice setup',
  { timeout: 180000 }, async () => {
    const stub = await startModelStub();
    try {
      await withHome('codex', async (ctx) => {
        // What a user has before setup: a commented config.toml of their own; here it points
        // Codex's model at the loopback stand-in and turns off what would reach the network.
        const config = path.join(ctx.env.CODEX_HOME, 'config.toml');
        fs.mkdirSync(path.dirname(config), { recursive: true });
        const before = [
          '# My Codex settings.',
          'model = "stub-model"',
          'model_provider = "stub"',
          'check_for_update_on_startup = false',
          '',
          '[model_providers.stub]',
          'name = "stub"',
          `base_url = "${stub.url}"`,
          'wire_api = "responses"',
          '',
          '[analytics]',
          'enabled = false',
          '',
        ].join('\n');
        fs.writeFileSync(config, before);
        await setup('codex', ctx);
        const after = fs.readFileSync(config, 'utf8');
        assert.ok(after.startsWith(before), `setup keeps every byte before its table:\n${after}`);

        const list = await run('codex', ['mcp', 'list', '--json'], {
          env: ctx.env, cwd: ctx.work, timeoutMs: 60000,
        });
        assert.equal(list.code, 0, describe(list));
        const entry = JSON.parse(list.stdout).find((s) => s.name === 'sluice');
        assert.ok(entry, describe(list));
        assert.equal(entry.enabled, true);
        assert.equal(entry.transport.type, 'stdio');
        assert.equal(path.basename(entry.transport.command), 'sluice');

        const get = await run('codex', ['mcp', 'get', 'sluice'], {
          env: ctx.env, cwd: ctx.work, timeoutMs: 60000,
        });
        assert.equal(get.code, 0, describe(get));
        assert.match(get.stdout, /^\s+transport: stdio$/m, describe(get));

        const exec = await run('codex', ['exec', '--skip-git-repo-check', 'Which tools do you have?'], {
          env: ctx.env, cwd: ctx.work, timeoutMs: 90000,
        });
        assert.equal(exec.code, 0, describe(exec));
        assert.ok(stub.requests.length > 0, `Codex never asked the model stand-in: ${describe(exec)}`);
        const offered = stub.requests[0].tools;
        for (const tool of ['gateway_catalog_search', 'gateway_describe', 'gateway_invoke']) {
          assert.ok(offered.includes(`mcp__sluice/${tool}`),
            `Codex offers sluice's ${tool}; it offered: ${offered.join(', ')}\n${describe(exec)}`);
        }
      });
    } finally {
      await stub.close();
    }
  });

test('timings', () => {
  for (const line of timings) console.log(`# ${line}`);
});
