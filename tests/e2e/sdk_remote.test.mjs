// End-to-end test of remote downstreams with software written by others: the official MCP
// TypeScript SDK client (@modelcontextprotocol/sdk) drives the sluice binary over stdio, and
// sluice fronts the reference server @modelcontextprotocol/server-everything running as a
// remote server, in its `streamableHttp` mode (a `"type": "http"` entry) and in its legacy
// `sse` mode (a `"type": "sse"` entry). Both packages are pinned in package.json.
//
// Run through run.sh (which installs the pinned packages and sets SLUICE_BINARY):
//   bash tests/e2e/run.sh build/src/sluice
//
// One describe block per mode. Each starts its own server-everything on a free loopback port
// (PORT=0, bound to 127.0.0.1 by tests/conformance/shim/loopback.cjs; the port is read from
// /proc), then each test starts its own sluice with its own HOME and config, and ends by
// closing the SDK client: sluice must exit 0 by itself. The block ends by stopping
// server-everything and checking that no marked process remains. Every await is bounded so a
// hung gateway fails the test instead of hanging CI.

import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, constants, mkdtemp, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  META_TOOLS,
  markedProcesses as markedProcessesWith,
  markedEverythingProcesses as markedEverythingProcessesWith,
  startSluice as startSluiceWith,
  structured,
  waitFor,
  within,
} from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SLUICE_BINARY = process.env.SLUICE_BINARY;
// server-everything's package.json: "bin": {"mcp-server-everything": "dist/index.js"};
// dist/index.js takes the transport as its first argument (stdio|sse|streamableHttp).
const EVERYTHING_ENTRY = path.join(
  HERE, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
// Preloaded into server-everything: its app.listen(PORT) names no host; the shim binds it to
// 127.0.0.1 only.
const LOOPBACK_SHIM = path.join(HERE, '..', 'conformance', 'shim', 'loopback.cjs');

// server-everything 2026.8.31, dist/transports/:
// - streamableHttp.js: POST/GET/DELETE /mcp (sessions by Mcp-Session-Id, an event store for
//   resumption); logs "MCP Streamable HTTP Server listening on port ${PORT}" to stderr once
//   listening, and "Received session termination request for session <id>" to stdout on a
//   DELETE.
// - sse.js: GET /sse (the event stream, whose `endpoint` event names /message?sessionId=...)
//   and POST /message; logs "Server is running on port ${PORT}" to stderr once listening, and
//   "Client Disconnected: <id>" to stderr when a stream ends.
// Both read PORT from the environment (default 3001).
const MODES = [
  {
    mode: 'streamableHttp',
    type: 'http',
    endpoint: '/mcp',
    listening: /MCP Streamable HTTP Server listening on port/,
    sessionEnded: /Received session termination request for session/,
    sessionEndedStream: 'stdout',
  },
  {
    mode: 'sse',
    type: 'sse',
    endpoint: '/sse',
    listening: /Server is running on port/,
    sessionEnded: /Client Disconnected: /,
    sessionEndedStream: 'stderr',
  },
];

// server-everything 2026.8.31, dist/tools/:
// - echo.js: z.object({ message: z.string() }), answers `Echo: ${message}`.
// - trigger-long-running-operation.js: z.object({ duration: z.number() (seconds),
//   steps: z.number() }); one notifications/progress {progress: i, total: steps} per step
//   when the call carries a progressToken.
// - trigger-sampling-request.js: registered only when the client (here: sluice, which offers
//   sampling to its downstreams in `--expose all` mode) has the sampling capability;
//   z.object({ prompt: z.string(), maxTokens: z.number() }); sends sampling/createMessage with
//   messages[0].content.text = `Resource trigger-sampling-request context: ${prompt}` and
//   returns `LLM sampling result: \n${JSON.stringify(result)}`.
const SLOW_TOOL = 'trigger-long-running-operation';
const SAMPLING_TOOL = 'trigger-sampling-request';

const REQUEST_TIMEOUT_MS = 20_000; // per MCP request (SDK request option)
const STEP_TIMEOUT_MS = 120_000; // per test (node:test option)
const LISTEN_TIMEOUT_MS = 15_000; // server-everything listens
const STATE_TIMEOUT_MS = 10_000; // a state reached by itself after one event
const EXIT_TIMEOUT_MS = 10_000; // a process exits after its stdin closes or a signal

// Unique per run, so concurrent runs (and the other e2e files) cannot see each other's
// processes or text.
const RUN_ID = randomBytes(8).toString('hex');
const MARKER_NAME = 'SLUICE_E2E_MARKER';
const MARKER_VALUE = `e2e-remote-${RUN_ID}`;

// The marker is in server-everything's environment and in sluice's, so the scan sees both.
const markedProcesses = () => markedProcessesWith(MARKER_NAME, MARKER_VALUE);
const markedEverythingProcesses = () => markedEverythingProcessesWith(MARKER_NAME, MARKER_VALUE);

/** The text of every text content item of a tool result, joined. */
const resultText = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/**
 * The TCP ports process `pid` listens on, from /proc: the inodes of its socket fds matched
 * against the LISTEN rows (state 0A) of its network namespace's tcp and tcp6 tables. Returns
 * [{address (hex, as /proc writes it), port}].
 */
async function listeningPorts(pid) {
  const inodes = new Set();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const found = [];
  for (const table of ['tcp', 'tcp6']) {
    const rows = (await readFile(`/proc/${pid}/net/${table}`, 'latin1')).split('\n').slice(1);
    for (const row of rows) {
      const f = row.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      if (f.length < 10 || f[3] !== '0A' || !inodes.has(f[9])) continue;
      const [address, port] = f[1].split(':');
      found.push({ address, port: parseInt(port, 16) });
    }
  }
  return found;
}

/**
 * Starts server-everything in `mode` on a free loopback port and waits (bounded) for it to
 * listen. Returns { child, port, output ({stdout, stderr} texts that grow), exited (resolves
 * with {code, signal} once it has exited and its pipes are closed), exitInfo() }.
 */
async function startEverything({ mode, listening }) {
  const preload = `--require ${JSON.stringify(LOOPBACK_SHIM)}`;
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, mode], {
    env: {
      ...process.env,
      PORT: '0',
      NODE_OPTIONS: [process.env.NODE_OPTIONS, preload].filter(Boolean).join(' '),
      [MARKER_NAME]: MARKER_VALUE,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (chunk) => { output.stdout += chunk; });
  child.stderr.on('data', (chunk) => { output.stderr += chunk; });
  let info = null;
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => { info = { code, signal }; resolve(info); });
  });
  let spawnError = null;
  child.once('error', (err) => { spawnError = err; });
  const server = { child, port: undefined, output, exited, exitInfo: () => info };
  const story = () => `exit: ${JSON.stringify(info)}\nstdout:\n${output.stdout}\nstderr:\n${output.stderr}`;
  await waitFor(LISTEN_TIMEOUT_MS, `server-everything ${mode} to say it listens`, () => {
    if (spawnError) throw new Error(`server-everything could not be started: ${spawnError.message}`);
    if (info) throw new Error(`server-everything exited before listening; ${story()}`);
    return listening.test(output.stderr);
  }, story);
  const ports = await listeningPorts(child.pid);
  // 127.0.0.1 as /proc/net/tcp writes it (little-endian hex): the shim bound it to loopback.
  assert.deepEqual(ports.map((p) => p.address), ['0100007F'],
    `server-everything listens on 127.0.0.1 only: ${JSON.stringify(ports)}`);
  server.port = ports[0].port;
  return server;
}

/**
 * Starts `sluice serve --no-discover --config configFile [args]` as the SDK client's stdio
 * server (HOME=workDir, the marker in its environment) and connects. With `samplingReply`
 * the client offers sampling and answers every sampling/createMessage with that text (the
 * requests land in `samplingRequests`). Returns { client, child, stderr ({text} that grows),
 * exited (resolves with {code, signal}), exitInfo(), forcedSignals (signals the SDK had to
 * send because sluice did not exit by itself), samplingRequests, sent and received (the
 * JSON-RPC messages after initialize, in order), errors (the SDK client's onerror) }.
 */
async function startSluice({ configFile, workDir, args = [], clientName, samplingReply }) {
  const samplingRequests = [];
  const { transport, client, stderr } = await startSluiceWith({
    Client, StdioClientTransport, binary: SLUICE_BINARY, configFile, workDir, clientName,
    timeoutMs: REQUEST_TIMEOUT_MS, args, env: { [MARKER_NAME]: MARKER_VALUE },
    capabilities: samplingReply === undefined ? undefined : { sampling: {} },
    prepare: (made) => {
      if (samplingReply === undefined) return;
      made.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        samplingRequests.push(request.params);
        return { model: 'e2e-model', role: 'assistant',
          content: { type: 'text', text: samplingReply } };
      });
    },
  });
  // Record the wire traffic from here on: the SDK Protocol calls transport.send() for every
  // outgoing message and transport.onmessage (set in connect()) for every incoming one.
  const sent = [];
  const received = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(structuredClone(message));
    return send(message, options);
  };
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(structuredClone(message));
    return onmessage(message, extra);
  };
  const errors = [];
  client.onerror = (err) => { errors.push(String(err)); };
  // StdioClientTransport keeps its ChildProcess private (SDK 1.32.2: `_process`); it is needed
  // to observe sluice's own exit and to notice when close() had to fall back to signals.
  const child = transport._process;
  assert.ok(child && child.pid, 'the SDK transport exposes the sluice child process');
  let info = null;
  const exited = new Promise((resolve) => {
    // 'close': the process has exited and its stdio streams are closed.
    child.once('close', (code, signal) => { info = { code, signal }; resolve(info); });
  });
  const forcedSignals = [];
  const kill = child.kill.bind(child);
  child.kill = (signal) => {
    forcedSignals.push(signal ?? 'SIGTERM');
    return kill(signal);
  };
  return { client, child, stderr, exited, exitInfo: () => info, forcedSignals, samplingRequests,
    sent, received, errors };
}

for (const spec of MODES) {
  describe(`sluice fronting server-everything ${spec.mode} as a "${spec.type}" server, driven by the official SDK client`,
    { timeout: 600_000 }, () => {
      let everything = null; // server-everything, for the whole block
      let world = null; // the current test's {workDir, sluice}; afterEach tears down what is left

      before(async () => {
        assert.ok(SLUICE_BINARY, 'SLUICE_BINARY is set (use run.sh)');
        await access(SLUICE_BINARY, constants.X_OK);
        await access(EVERYTHING_ENTRY, constants.R_OK);
        await access(LOOPBACK_SHIM, constants.R_OK);
        everything = await startEverything(spec);
      });

      afterEach(async () => {
        // The safety net for failed tests; a passing test has already closed its sluice.
        const w = world;
        world = null;
        if (!w) return;
        if (w.sluice) {
          try { await within(EXIT_TIMEOUT_MS, 'client.close (cleanup)', w.sluice.client.close()); } catch { /* reported by the test */ }
          if (!w.sluice.exitInfo()) {
            try { w.sluice.child.kill('SIGKILL'); } catch { /* already gone */ }
          }
        }
        await rm(w.workDir, { recursive: true, force: true });
      });

      after(async () => {
        // The safety net for a failed last step: nothing marked may outlive the block.
        if (everything && !everything.exitInfo()) {
          try { everything.child.kill('SIGKILL'); } catch { /* already gone */ }
        }
        for (const { pid } of await markedProcesses()) {
          try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
        }
      });

      const url = () => `http://127.0.0.1:${everything.port}${spec.endpoint}`;
      const everythingStory = () =>
        `\nserver-everything stdout:\n${everything.output.stdout}\nserver-everything stderr:\n${everything.output.stderr}`;

      /** A fresh work dir and config with the one remote server, and a sluice on it. */
      async function startWorld(label, { args = [], samplingReply } = {}) {
        const workDir = await mkdtemp(path.join(tmpdir(), `sluice-e2e-remote-${spec.type}-${label}-`));
        world = { workDir, sluice: null };
        const configFile = path.join(workDir, 'mcp.json');
        const config = { mcpServers: { everything: { type: spec.type, url: url() } } };
        await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
        world.sluice = await startSluice({ configFile, workDir, args, samplingReply,
          clientName: `sluice-e2e-remote-${spec.type}-${label}` });
        return world.sluice;
      }

      /**
       * Closes the SDK client (ending sluice's stdin): sluice exits 0 by itself, without the
       * SDK's fallback signals, and ends its session with server-everything.
       */
      async function closeAndCheck(sluice) {
        const sessionsEnded = () => (everything.output[spec.sessionEndedStream]
          .match(new RegExp(spec.sessionEnded.source, 'g')) ?? []).length;
        const sessionsEndedBefore = sessionsEnded();
        await within(EXIT_TIMEOUT_MS, 'client.close', sluice.client.close());
        const { code, signal } = await within(EXIT_TIMEOUT_MS, 'sluice exit', sluice.exited);
        const story = `\nsluice stderr:\n${sluice.stderr.text}`;
        assert.deepEqual(sluice.forcedSignals, [], `sluice exits on stdin EOF without being signalled${story}`);
        assert.equal(signal, null, `sluice was not killed by a signal${story}`);
        assert.equal(code, 0, `sluice exit status${story}`);
        // Streamable HTTP: the session was DELETEd; legacy SSE: the event stream was closed.
        await waitFor(STATE_TIMEOUT_MS, `server-everything to see sluice's session end (${spec.sessionEnded})`,
          () => sessionsEnded() > sessionsEndedBefore,
          () => `${story}${everythingStory()}`);
      }

      it('meta mode: catalog_search finds echo, describe gives its schema, invoke echoes, progress arrives, health shows it online',
        { timeout: STEP_TIMEOUT_MS }, async () => {
          const sluice = await startWorld('meta');
          const call = (name, args = {}, options = {}) =>
            sluice.client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS, ...options });
          const story = () => `\nsluice stderr:\n${sluice.stderr.text}${everythingStory()}`;

          const { tools } = await sluice.client.listTools({}, { timeout: REQUEST_TIMEOUT_MS });
          assert.deepEqual(tools.map((t) => t.name).sort(), META_TOOLS);

          // Search is complete: the remote server is connected and listed at once.
          const found = structured(await call('gateway.catalog_search', { query: 'echo' }), 'catalog_search');
          assert.ok(found.results.length > 0, `echo is found: ${JSON.stringify(found)}${story()}`);
          const first = found.results[0];
          assert.equal(first.tool_id, 'everything::echo', `first result: ${JSON.stringify(found.results)}`);
          assert.equal(first.server, 'everything');
          assert.equal(first.tool_name, 'echo');
          assert.equal(first.source, 'online');

          const d = structured(await call('gateway.describe', { tool_id: 'everything::echo' }), 'describe');
          assert.equal(d.tool_id, 'everything::echo');
          assert.match(d.description, /echo/i);
          // z.object({ message: z.string().describe("Message to echo") })
          assert.equal(d.inputSchema?.type, 'object', JSON.stringify(d));
          assert.equal(d.inputSchema.properties?.message?.type, 'string', JSON.stringify(d.inputSchema));
          assert.ok(d.inputSchema.required?.includes('message'), 'message is required');

          const message = `hello over ${spec.type} ${RUN_ID}`;
          const echoed = await call('gateway.invoke', { tool_id: 'everything::echo', arguments: { message } });
          assert.notEqual(echoed.isError, true, JSON.stringify(echoed));
          assert.equal(resultText(echoed), `Echo: ${message}`, JSON.stringify(echoed));

          // onprogress makes the SDK send a progressToken (its request id); server-everything's
          // notifications come back through sluice, in order, all before the result. That is
          // checked on the wire: the SDK client (1.32.2, Protocol._onnotification) runs a
          // notification handler a microtask later but handles a response at once, and the
          // response drops the call's progress handler, so a progress notification read in the
          // same chunk as its call's response never reaches onprogress (onerror: "Received a
          // progress notification for an unknown token"). server-everything sends its last
          // progress right before the result, so over Streamable HTTP both arrive in one read
          // and sluice writes them back to back; the same SDK client connected to
          // server-everything's stdio directly loses it now and then too.
          const progress = [];
          const sentBefore = sluice.sent.length;
          const receivedBefore = sluice.received.length;
          const slow = await call('gateway.invoke',
            { tool_id: `everything::${SLOW_TOOL}`, arguments: { duration: 1.5, steps: 3 } },
            { onprogress: (p) => progress.push(p) });
          assert.notEqual(slow.isError, true, `${JSON.stringify(slow)}${story()}`);
          assert.match(resultText(slow), /Long running operation completed. Duration: 1.5 seconds, Steps: 3/,
            JSON.stringify(slow));
          const request = sluice.sent.slice(sentBefore).find((m) => m.method === 'tools/call');
          assert.ok(request, 'the SDK sent the tools/call');
          const token = request.params?._meta?.progressToken;
          assert.notEqual(token, undefined, `the SDK sent a progressToken: ${JSON.stringify(request)}`);
          const wire = sluice.received.slice(receivedBefore);
          const wireStory = () => `\nreceived: ${JSON.stringify(wire)}${story()}`;
          const answeredAt = wire.findIndex((m) => m.id === request.id && m.method === undefined);
          assert.ok(answeredAt >= 0, `the call was answered${wireStory()}`);
          const progressOf = (messages) => messages
            .filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === token)
            .map((m) => [m.params.progress, m.params.total]);
          assert.deepEqual(progressOf(wire.slice(0, answeredAt)), [[1, 3], [2, 3], [3, 3]],
            `three progress notifications in order before the result${wireStory()}`);
          assert.deepEqual(progressOf(wire.slice(answeredAt + 1)), [], `no progress after the result${wireStory()}`);
          // What onprogress saw: all three, or the first two when the last came in the same read
          // as the result (above).
          const seen = progress.map((p) => [p.progress, p.total]);
          assert.ok(seen.length >= 2, `onprogress got the first two: ${JSON.stringify(seen)}`);
          assert.deepEqual(seen, [[1, 3], [2, 3], [3, 3]].slice(0, seen.length),
            `onprogress got them in order: ${JSON.stringify(seen)}`);
          const unknownToken = /Received a progress notification for an unknown token/;
          assert.equal(sluice.errors.filter((e) => unknownToken.test(e)).length, 3 - seen.length,
            `the SDK reported each progress it dropped: ${JSON.stringify(sluice.errors)}`);
          assert.deepEqual(sluice.errors.filter((e) => !unknownToken.test(e)), [],
            'the SDK client saw no other error');

          const h = structured(await call('gateway.health'), 'health');
          const row = h.servers.find((s) => s.name === 'everything');
          assert.ok(row, `everything is listed: ${JSON.stringify(h.servers)}`);
          assert.equal(row.status, 'online', JSON.stringify(row));
          assert.equal(row.transport, spec.type, JSON.stringify(row));
          assert.ok(row.tool_count >= 1, `everything has tools: ${JSON.stringify(row)}`);
          assert.match(row.protocol_version ?? '', /^\d{4}-\d{2}-\d{2}$/, JSON.stringify(row));
          assert.ok(row.last_error === null || row.last_error === undefined,
            `no last_error: ${JSON.stringify(row.last_error)}`);

          await closeAndCheck(sluice);
        });

      it('aggregate mode (--expose all): everything__* tools are listed, sampling is relayed to the SDK client and its answer comes back',
        { timeout: STEP_TIMEOUT_MS }, async () => {
          const samplingReply = `sampled answer over ${spec.type} ${RUN_ID}`;
          const sluice = await startWorld('all', { args: ['--expose', 'all'], samplingReply });
          const call = (name, args = {}) =>
            sluice.client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });
          const story = () => `\nsluice stderr:\n${sluice.stderr.text}${everythingStory()}`;

          // The sampling tool is registered by server-everything after initialized, hence the
          // bounded wait.
          const listNames = async () => (await sluice.client.listTools({}, { timeout: REQUEST_TIMEOUT_MS }))
            .tools.map((t) => t.name);
          const names = await waitFor(STATE_TIMEOUT_MS, `everything__${SAMPLING_TOOL} to be listed`, async () => {
            const n = await listNames();
            return n.includes(`everything__${SAMPLING_TOOL}`) ? n : null;
          }, async () => `${JSON.stringify(await listNames())}${story()}`);
          assert.ok(names.every((n) => n.startsWith('everything__')), JSON.stringify(names));
          for (const expected of ['everything__echo', `everything__${SLOW_TOOL}`]) {
            assert.ok(names.includes(expected), `${expected} is listed: ${JSON.stringify(names)}`);
          }

          const echoed = await call('everything__echo', { message: `aggregate ${RUN_ID}` });
          assert.equal(resultText(echoed), `Echo: aggregate ${RUN_ID}`, JSON.stringify(echoed));

          // server-everything asks sluice, sluice asks this client, the answer goes back.
          const prompted = `sample this ${RUN_ID}`;
          const sampled = await call(`everything__${SAMPLING_TOOL}`, { prompt: prompted, maxTokens: 16 });
          assert.notEqual(sampled.isError, true, `${JSON.stringify(sampled)}${story()}`);
          assert.equal(sluice.samplingRequests.length, 1,
            `one sampling request reached the client: ${JSON.stringify(sluice.samplingRequests)}`);
          assert.equal(sluice.samplingRequests[0].messages?.[0]?.content?.text,
            `Resource ${SAMPLING_TOOL} context: ${prompted}`, JSON.stringify(sluice.samplingRequests[0]));
          assert.ok(resultText(sampled).includes(samplingReply), `the client's answer came back: ${JSON.stringify(sampled)}`);
          assert.deepEqual(sluice.errors, [], 'the SDK client saw no error');

          await closeAndCheck(sluice);
        });

      it('stopping server-everything leaves no marked process', { timeout: STEP_TIMEOUT_MS }, async () => {
        assert.equal(everything.exitInfo(), null, `server-everything is still running${everythingStory()}`);
        everything.child.kill('SIGTERM');
        const { signal } = await within(EXIT_TIMEOUT_MS, 'server-everything exit after SIGTERM', everything.exited);
        assert.equal(signal, 'SIGTERM', `server-everything ended by the SIGTERM${everythingStory()}`);
        await waitFor(EXIT_TIMEOUT_MS, 'no marked process to remain',
          async () => (await markedProcesses()).length === 0,
          async () => JSON.stringify(await markedProcesses()));
        assert.deepEqual(await markedEverythingProcesses(), []);
      });
    });
}
