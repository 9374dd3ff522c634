// End-to-end test with software written by others: the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk) drives the sluice binary over stdio, and sluice fronts the
// reference server @modelcontextprotocol/server-everything. Both are pinned in package.json.
//
// Run through run.sh (which installs the pinned packages and sets SLUICE_BINARY):
//   bash tests/e2e/run.sh build/src/sluice
//
// The steps share one sluice session and run in order; every await is bounded so a hung
// gateway fails the test instead of hanging CI.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile, access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import {
  META_TOOLS,
  markedEverythingProcesses as markedEverythingProcessesWith,
  startSluice,
  structured,
  waitFor,
  within,
  cleanUpStdioRun,
} from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SLUICE_BINARY = process.env.SLUICE_BINARY;
// server-everything's package.json: "bin": {"mcp-server-everything": "dist/index.js"};
// dist/index.js takes the transport as its first argument (stdio|sse|streamableHttp).
const EVERYTHING_ENTRY = path.join(
  HERE, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const REQUEST_TIMEOUT_MS = 20_000; // per MCP request (SDK request option)
const STEP_TIMEOUT_MS = 60_000; // per test step (node:test option)
const EXIT_TIMEOUT_MS = 10_000; // sluice exit, downstream cleanup

// Unique per run, so concurrent runs cannot see each other's processes or text.
const RUN_ID = randomBytes(8).toString('hex');
const MARKER_NAME = 'SLUICE_E2E_MARKER';
const MARKER_VALUE = `e2e-${RUN_ID}`;
const SENTINEL = `SENTINEL_${RUN_ID}`;
const SENTINEL_NUMBER = 900_000_000 + Math.floor(Math.random() * 99_999_999); // 9 digits


// Bound to this test's marker.
const markedEverythingProcesses = () => markedEverythingProcessesWith(MARKER_NAME, MARKER_VALUE);

describe('sluice driven by the official MCP TypeScript SDK client', { timeout: 180_000 }, () => {
  let workDir;
  let configFile;
  let transport;
  let client;
  let child; // sluice's ChildProcess
  let stderrLog = { text: '' }; // sluice's stderr so far
  let exitInfo = null; // {code, signal} once sluice has exited
  let exited; // resolves with exitInfo
  let stderrEnded; // resolves when sluice's stderr has been read to its end
  const forcedSignals = []; // signals the SDK had to send because sluice did not exit by itself
  const timeline = []; // shutdown events, for failure messages
  let closeStarted = 0;
  const elapsed = () => `+${Date.now() - closeStarted} ms`;

  const call = (name, args = {}) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });

  before(async () => {
    assert.ok(SLUICE_BINARY, 'SLUICE_BINARY is set (use run.sh)');
    await access(SLUICE_BINARY, constants.X_OK);
    await access(EVERYTHING_ENTRY, constants.R_OK);

    workDir = await mkdtemp(path.join(tmpdir(), 'sluice-e2e-'));
    configFile = path.join(workDir, '.mcp.json');
    const config = {
      mcpServers: {
        everything: {
          command: process.execPath, // this very node binary: no PATH lookup involved
          args: [EVERYTHING_ENTRY, 'stdio'],
          env: { [MARKER_NAME]: MARKER_VALUE },
        },
      },
    };
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);

    const started = await startSluice({ Client, StdioClientTransport, binary: SLUICE_BINARY,
      configFile, workDir, clientName: 'sluice-e2e', timeoutMs: REQUEST_TIMEOUT_MS });
    ({ transport, client, stderrEnded } = started);
    stderrLog = started.stderr;

    // StdioClientTransport keeps its ChildProcess private (SDK 1.32.2: `_process`); we need it
    // to observe sluice's own exit and to notice when close() had to fall back to signals.
    child = transport._process;
    assert.ok(child && child.pid, 'the SDK transport exposes the sluice child process');
    child.once('exit', (code, signal) => { timeline.push(`${elapsed()} exit code=${code} signal=${signal}`); });
    exited = new Promise((resolve) => {
      // 'close': the process has exited and its stdio streams are closed.
      child.once('close', (code, signal) => {
        timeline.push(`${elapsed()} close`);
        exitInfo = { code, signal };
        resolve(exitInfo);
      });
    });
    const kill = child.kill.bind(child);
    child.kill = (signal) => {
      forcedSignals.push(signal ?? 'SIGTERM');
      timeline.push(`${elapsed()} SDK sends ${signal ?? 'SIGTERM'}`);
      return kill(signal);
    };
  });

  after(async () => {
    // Normally step 7 already closed everything; this is the safety net for failed steps.
    await cleanUpStdioRun({ client, child, exited: exitInfo !== null,
      marked: markedEverythingProcesses, workDir, timeoutMs: EXIT_TIMEOUT_MS });
  });

  it('1. lists exactly the gateway.* meta-tools', { timeout: STEP_TIMEOUT_MS }, async () => {
    const { tools } = await client.listTools({}, { timeout: REQUEST_TIMEOUT_MS });
    assert.deepEqual(tools.map((t) => t.name).sort(), META_TOOLS);
    for (const tool of tools) {
      assert.equal(tool.inputSchema?.type, 'object', `${tool.name} has an object inputSchema`);
      assert.equal(typeof tool.description, 'string', `${tool.name} has a description`);
    }
  });

  it('2. the first catalog_search indexes the lazy server and finds everything::echo first',
    { timeout: STEP_TIMEOUT_MS }, async () => {
      // Lazy: nothing has started the downstream yet.
      assert.deepEqual(await markedEverythingProcesses(), [], 'everything is not started before first use');

      const found = structured(await call('gateway.catalog_search', { query: 'echo' }), 'catalog_search');
      assert.ok(Array.isArray(found.results), 'results is an array');
      assert.equal(typeof found.total_tools, 'number');
      assert.equal(typeof found.total_matches, 'number');
      assert.equal(typeof found.truncated, 'boolean');
      // Search is complete: a server with no cached listing is started and indexed at once.
      const running = await markedEverythingProcesses();
      assert.ok(running.length >= 1,
        'the search started server-everything with the env from .mcp.json (marker visible in /proc)');
      assert.ok(found.results.length > 0, `echo is found: ${JSON.stringify(found)}`);
      const first = found.results[0];
      assert.equal(first.tool_id, 'everything::echo', `first result: ${JSON.stringify(found.results)}`);
      assert.equal(first.server, 'everything');
      assert.equal(first.tool_name, 'echo');
      assert.equal(first.source, 'online');
      assert.equal(typeof first.short_description, 'string');
      assert.ok(!(found.offline_servers ?? []).some((s) => s.server === 'everything'),
        'everything has no offline card');

      const connected = structured(await call('gateway.connect_server', { server_name: 'everything' }), 'connect_server');
      assert.equal(connected.status, 'online');
    });

  it('3. describe returns echo\'s real inputSchema', { timeout: STEP_TIMEOUT_MS }, async () => {
    const d = structured(await call('gateway.describe', { tool_id: 'everything::echo' }), 'describe');
    assert.equal(d.tool_id, 'everything::echo');
    assert.equal(d.server, 'everything');
    assert.equal(d.tool_name, 'echo');
    assert.equal(typeof d.description, 'string');
    assert.match(d.description, /echo/i);
    // server-everything 2026.8.31: z.object({ message: z.string().describe("Message to echo") })
    assert.equal(d.inputSchema?.type, 'object');
    assert.equal(d.inputSchema.properties?.message?.type, 'string', JSON.stringify(d.inputSchema));
    assert.ok(d.inputSchema.required?.includes('message'), 'message is required');
    assert.ok(d.invoke_template !== undefined && d.invoke_template !== null, 'has an invoke_template');
    assert.ok(JSON.stringify(d.invoke_template).includes('everything::echo'),
      `invoke_template names the tool: ${JSON.stringify(d.invoke_template)}`);
  });

  it('4. invoke passes the downstream echo result through', { timeout: STEP_TIMEOUT_MS }, async () => {
    const r = await call('gateway.invoke', {
      tool_id: 'everything::echo',
      arguments: { message: 'hello from the sdk' },
    });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.equal(r.content?.[0]?.type, 'text');
    assert.ok(r.content[0].text.includes('hello from the sdk'), JSON.stringify(r));
  });

  it('5. an argument of the wrong type is rejected by path without echoing its value',
    { timeout: STEP_TIMEOUT_MS }, async () => {
      const badArguments = [
        { message: { [SENTINEL]: SENTINEL } },
        { message: SENTINEL_NUMBER },
        { message: [SENTINEL] },
      ];
      for (const args of badArguments) {
        const r = await call('gateway.invoke', { tool_id: 'everything::echo', arguments: args });
        const shown = JSON.stringify(r);
        assert.equal(r.isError, true, `wrong type must fail: ${shown}`);
        const text = (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
        assert.ok(text.includes('$.message:'), `the error names the path $.message: ${shown}`);
        assert.ok(!shown.includes(SENTINEL), `the result does not echo the sentinel: ${shown}`);
        assert.ok(!shown.includes(String(SENTINEL_NUMBER)), `the result does not echo the number: ${shown}`);
      }
      // The gateway still answers afterwards. (stderr is checked again, complete, in step 7.)
      await client.ping({ timeout: REQUEST_TIMEOUT_MS });
      assert.ok(!stderrLog.text.includes(SENTINEL), 'sluice stderr does not contain the sentinel');
      assert.ok(!stderrLog.text.includes(String(SENTINEL_NUMBER)), 'sluice stderr does not contain the number');
    });

  it('6. health reports everything online', { timeout: STEP_TIMEOUT_MS }, async () => {
    const h = structured(await call('gateway.health'), 'health');
    assert.equal(typeof h.gateway?.version, 'string');
    assert.ok(h.gateway.version.length > 0);
    assert.ok(Array.isArray(h.servers));
    const everything = h.servers.find((s) => s.name === 'everything');
    assert.ok(everything, `everything is listed: ${JSON.stringify(h.servers)}`);
    assert.equal(everything.status, 'online', JSON.stringify(everything));
    assert.equal(typeof everything.tool_count, 'number');
    assert.ok(everything.tool_count >= 1, 'everything has tools');
    assert.equal(typeof everything.protocol_version, 'string');
    assert.match(everything.protocol_version, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(everything.last_error === null || everything.last_error === undefined || everything.last_error === '',
      `no last_error: ${JSON.stringify(everything.last_error)}`);
  });

  it('7. closing the client makes sluice exit and reap its downstream', { timeout: STEP_TIMEOUT_MS }, async () => {
    assert.ok((await markedEverythingProcesses()).length >= 1, 'everything is running before close');

    // client.close() ends sluice's stdin; the SDK falls back to SIGTERM after 2 s and
    // SIGKILL after 4 s. A well-behaved stdio server exits on EOF without either.
    closeStarted = Date.now();
    timeline.push('+0 ms client.close() ends sluice stdin');
    await within(EXIT_TIMEOUT_MS, 'client.close', client.close());
    const { code, signal } = await within(EXIT_TIMEOUT_MS, 'sluice exit', exited);
    await within(EXIT_TIMEOUT_MS, 'end of sluice stderr', stderrEnded);

    await waitFor(EXIT_TIMEOUT_MS, 'no marked server-everything process to remain',
      async () => (await markedEverythingProcesses()).length === 0)
      .catch(async (err) => {
        err.message += `: ${JSON.stringify(await markedEverythingProcesses())}`;
        throw err;
      });

    assert.ok(!stderrLog.text.includes(SENTINEL), 'sluice stderr never contained the sentinel');
    assert.ok(!stderrLog.text.includes(String(SENTINEL_NUMBER)), 'sluice stderr never contained the number');

    // Last, so a failure here still reports the checks above.
    const story = `\n${timeline.join('\n')}\nsluice stderr:\n${stderrLog.text}`;
    assert.deepEqual(forcedSignals, [], `sluice exits on stdin EOF without being signalled${story}`);
    assert.equal(signal, null, `sluice was not killed by a signal${story}`);
    assert.equal(code, 0, `sluice exit status${story}`);
  });
});
