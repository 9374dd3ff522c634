// End-to-end cancellation test with software written by others: the official MCP TypeScript
// SDK client (@modelcontextprotocol/sdk) aborts a gateway.invoke through its AbortSignal while
// sluice is running a slow tool of @modelcontextprotocol/server-everything (both pinned in
// package.json). Checks invariants §2-§3 from the outside: the cancel reaches the
// downstream (C1), the slot stays with the abandoned work (C2), exactly one outcome is counted
// (C3), nothing more reaches the client for the cancelled id (C4), the session stays usable
// (C6), a call cancelled while queued leaves the queue (A3), and sluice exits 0 at the end.
//
// Run through run.sh (which installs the pinned packages and sets SLUICE_BINARY):
//   bash tests/e2e/run.sh build/src/sluice
//
// The steps share one sluice session and run in order; every await is bounded so a hung
// gateway fails the test instead of hanging CI.
//
// How server-everything 2026.8.31 (server SDK 1.32.2) treats the cancel: its Protocol aborts
// the handler's signal and then drops the handler's result, so a cancelled tools/call is
// never answered. trigger-long-running-operation ignores the signal and keeps working
// (setTimeout steps) until its duration ends, then its result is discarded. So:
//   - while the downstream works, and after, the abandoned call keeps its permit;
//   - if the cancel had not reached the downstream (or carried the client's id instead of
//     the downstream's), the SDK server would answer at the end of the duration and the call
//     would be counted `completed`: step 4 watches past the duration to see that it is not;
//   - the call can then only end when the downstream dies (or, for stdio, never before:
//     abandon-bound expiry keeps the permit, C2). Step 4 kills the downstream process, the
//     way a crash would, and expects one outcome, `transport_lost`.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile, access, constants } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import {
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

// server-everything 2026.8.31, dist/tools/trigger-long-running-operation.js:
//   z.object({ duration: z.number().default(10) /* seconds */, steps: z.number().default(5) })
//   annotations: { readOnlyHint: true, ... }  -> class budget 8; the config below sets 1.
const SLOW_TOOL = 'trigger-long-running-operation';
const SLOW_TOOL_ID = `everything::${SLOW_TOOL}`;
const SLOW_DURATION_S = 5;
const SLOW_ARGUMENTS = { duration: SLOW_DURATION_S, steps: SLOW_DURATION_S };
// How long past the end of the slow tool's duration step 4 keeps watching for an answer that
// must not come. (Only a broken sluice could be missed on a very slow machine; a working
// one cannot fail because of it.)
const PAST_DURATION_MS = 1_500;

const REQUEST_TIMEOUT_MS = 20_000; // per MCP request (SDK request option)
const STEP_TIMEOUT_MS = 60_000; // per test step (node:test option)
const STATE_TIMEOUT_MS = 10_000; // a state sluice reaches by itself after one event
const ABORT_SETTLE_MS = 2_000; // the SDK promise rejects this soon after abort()
const END_TIMEOUT_MS = 30_000; // the abandoned call ends after its downstream dies
const EXIT_TIMEOUT_MS = 10_000; // sluice exit, downstream cleanup

// Unique per run, so concurrent runs (and the other e2e file) cannot see each other's processes.
const RUN_ID = randomBytes(8).toString('hex');
const MARKER_NAME = 'SLUICE_E2E_MARKER';
const MARKER_VALUE = `e2e-cancel-${RUN_ID}`;
const ECHO_TEXT = `still here ${RUN_ID}`;

// Bound to this test's marker.
const markedEverythingProcesses = () => markedEverythingProcessesWith(MARKER_NAME, MARKER_VALUE);

/** The outcome counters of one health row (server or tool): one per ended call. */
const outcomes = (row) => row.completed + row.errored + row.transport_lost + row.expired;

describe('sluice: an SDK client aborts a running gateway.invoke', { timeout: 180_000 }, () => {
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
  const sent = []; // JSON-RPC messages the client sent after initialize
  const received = []; // JSON-RPC messages the client received after initialize

  // Shared between the steps.
  let slowRequestId; // the client's JSON-RPC id of the aborted gateway.invoke
  let queuedRequestId; // the client's JSON-RPC id of the invoke aborted while queued
  let slowSentAt; // when the aborted invoke was sent (the downstream's work starts after)

  const call = (name, args = {}) =>
    client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT_MS });

  /** gateway.health's row for everything and its row for `tool`. */
  async function health(tool = SLOW_TOOL) {
    const h = structured(await call('gateway.health'), 'health');
    const server = h.servers.find((s) => s.name === 'everything');
    assert.ok(server, `everything is listed: ${JSON.stringify(h.servers)}`);
    const row = (server.tools ?? []).find((t) => t.tool === tool);
    assert.ok(row, `health lists ${tool}: ${JSON.stringify(server.tools)}`);
    return { server, tool: row };
  }

  /** gateway.list_pending's calls of the slow tool. */
  async function pendingSlowCalls() {
    const p = structured(await call('gateway.list_pending', { server: 'everything' }), 'list_pending');
    assert.equal(typeof p.count, 'number');
    assert.ok(Array.isArray(p.calls), 'calls is an array');
    assert.equal(p.count, p.calls.length, `count matches calls: ${JSON.stringify(p)}`);
    return p.calls.filter((c) => c.tool_id === SLOW_TOOL_ID);
  }

  /** Starts gateway.invoke of the slow tool under `signal`; returns its promise and client id. */
  function invokeSlow(signal) {
    const before = sent.length;
    const promise = client.callTool(
      { name: 'gateway.invoke', arguments: { tool_id: SLOW_TOOL_ID, arguments: SLOW_ARGUMENTS } },
      undefined, { timeout: REQUEST_TIMEOUT_MS, signal });
    // The SDK sends synchronously inside request(); the request is the newest tools/call.
    const request = sent.slice(before).find((m) => m.method === 'tools/call');
    assert.ok(request, 'the SDK sent the tools/call');
    assert.equal(request.params?.arguments?.tool_id, SLOW_TOOL_ID);
    // Keep an unobserved rejection from being reported before the step awaits it.
    promise.catch(() => {});
    return { promise, id: request.id };
  }

  /** Aborts `controller` and expects the SDK promise to reject as aborted, promptly. */
  async function abortAndExpectRejection(controller, promise, label) {
    const abortedAt = Date.now();
    controller.abort();
    await within(ABORT_SETTLE_MS, `${label}: the SDK promise settles after abort()`,
      assert.rejects(promise, (err) => {
        assert.match(String(err?.message), /abort/i, `${label}: rejected as aborted: ${err}`);
        return true;
      }));
    return Date.now() - abortedAt;
  }

  /** The notifications/cancelled the client sent for `id`. */
  const cancelsSentFor = (id) =>
    sent.filter((m) => m.method === 'notifications/cancelled' && m.params?.requestId === id);

  /** Responses (results or errors) the client received for its request `id`. */
  const receivedFor = (id) => received.filter((m) => m.id === id && m.method === undefined);

  before(async () => {
    assert.ok(SLUICE_BINARY, 'SLUICE_BINARY is set (use run.sh)');
    await access(SLUICE_BINARY, constants.X_OK);
    await access(EVERYTHING_ENTRY, constants.R_OK);

    workDir = await mkdtemp(path.join(tmpdir(), 'sluice-e2e-cancel-'));
    configFile = path.join(workDir, '.mcp.json');
    const config = {
      mcpServers: {
        everything: {
          command: process.execPath, // this very node binary: no PATH lookup involved
          args: [EVERYTHING_ENTRY, 'stdio'],
          env: { [MARKER_NAME]: MARKER_VALUE },
          sluice: { tools: { [SLOW_TOOL]: 1 } },
        },
      },
    };
    await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);

    const started = await startSluice({ Client, StdioClientTransport, binary: SLUICE_BINARY,
      configFile, workDir, clientName: 'sluice-e2e-cancel', timeoutMs: REQUEST_TIMEOUT_MS });
    ({ transport, client, stderrEnded } = started);
    stderrLog = started.stderr;

    // Record the wire traffic from here on: the SDK Protocol calls transport.send() for every
    // outgoing message and transport.onmessage (set in connect()) for every incoming one.
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

    // StdioClientTransport keeps its ChildProcess private (SDK 1.32.2: `_process`); we need it
    // to observe sluice's own exit and to notice when close() had to fall back to signals.
    child = transport._process;
    assert.ok(child && child.pid, 'the SDK transport exposes the sluice child process');
    exited = new Promise((resolve) => {
      child.once('close', (code, signal) => {
        exitInfo = { code, signal };
        resolve(exitInfo);
      });
    });
    const kill = child.kill.bind(child);
    child.kill = (signal) => {
      forcedSignals.push(signal ?? 'SIGTERM');
      return kill(signal);
    };
  });

  after(async () => {
    // Normally step 5 already closed everything; this is the safety net for failed steps.
    await cleanUpStdioRun({ client, child, exited: exitInfo !== null,
      marked: markedEverythingProcesses, workDir, timeoutMs: EXIT_TIMEOUT_MS });
  });

  it('1. an invoke of the slow tool runs, then abort() rejects the SDK promise promptly',
    { timeout: STEP_TIMEOUT_MS }, async () => {
      structured(await call('gateway.connect_server', { server_name: 'everything' }), 'connect_server');
      assert.equal((await markedEverythingProcesses()).length, 1, 'one server-everything runs');
      // (health lists a tool's admission row once the tool has been called.)

      const controller = new AbortController();
      slowSentAt = Date.now();
      const { promise, id } = invokeSlow(controller.signal);
      slowRequestId = id;

      // Each poll is a round trip through sluice, so "running" is seen only once sluice has
      // admitted the call and sent it downstream.
      const [running] = await waitFor(STATE_TIMEOUT_MS, `${SLOW_TOOL_ID} to be running`,
        async () => {
          const calls = await pendingSlowCalls();
          return calls.some((c) => c.state === 'running') ? calls : null;
        }, async () => JSON.stringify(await pendingSlowCalls()));
      assert.equal(typeof running.request_id, 'string');
      assert.equal(typeof running.age_ms, 'number');
      assert.equal(typeof running.timeout_ms, 'number');
      assert.equal(running.abandoned_ms, undefined, `not abandoned yet: ${JSON.stringify(running)}`);
      const { tool: busy } = await health();
      assert.equal(busy.budget, 1, `the budget from .mcp.json applies: ${JSON.stringify(busy)}`);
      assert.equal(busy.permits_held, 1, JSON.stringify(busy));
      assert.equal(busy.in_flight, 1, JSON.stringify(busy));
      assert.equal(busy.abandoned_in_flight, 0, JSON.stringify(busy));
      assert.equal(outcomes(busy), 0, JSON.stringify(busy));

      const ms = await abortAndExpectRejection(controller, promise, 'running invoke');
      assert.ok(ms < ABORT_SETTLE_MS, `rejected ${ms} ms after abort()`);
      assert.equal(cancelsSentFor(slowRequestId).length, 1,
        'the SDK sent one notifications/cancelled for the invoke');
    });

  it('2. the abandoned call keeps its slot: permits_held 1, abandoned_in_flight 1, list_pending abandoned',
    { timeout: STEP_TIMEOUT_MS }, async () => {
      const { server, tool } = await waitFor(STATE_TIMEOUT_MS, 'abandoned_in_flight to become 1',
        async () => {
          const h = await health();
          return h.tool.abandoned_in_flight === 1 ? h : null;
        }, async () => JSON.stringify((await health()).tool));
      assert.equal(tool.permits_held, 1, `the permit stays with the work: ${JSON.stringify(tool)}`);
      assert.equal(tool.in_flight, 1, JSON.stringify(tool));
      assert.equal(tool.queued, 0, JSON.stringify(tool));
      assert.equal(outcomes(tool), 0, `no outcome yet: ${JSON.stringify(tool)}`);
      assert.equal(server.abandoned_in_flight, 1, `server row: ${JSON.stringify(server)}`);
      assert.equal(server.permits_held, 1, `server row: ${JSON.stringify(server)}`);
      assert.equal(typeof server.oldest_abandoned_ms, 'number', JSON.stringify(server));

      const calls = await pendingSlowCalls();
      assert.equal(calls.length, 1, JSON.stringify(calls));
      assert.equal(calls[0].state, 'abandoned', JSON.stringify(calls[0]));
      assert.equal(typeof calls[0].abandoned_ms, 'number', JSON.stringify(calls[0]));

      // The slot really is taken: with budget 1 a second call of the slow tool waits in the
      // queue. Aborting it there takes it out of the queue without touching the held permit (A3).
      const controller = new AbortController();
      const { promise, id } = invokeSlow(controller.signal);
      queuedRequestId = id;
      await waitFor(STATE_TIMEOUT_MS, 'the second call to be queued', async () => {
        const states = (await pendingSlowCalls()).map((c) => c.state).sort();
        return states.join() === 'abandoned,queued';
      }, async () => JSON.stringify(await pendingSlowCalls()));
      assert.equal((await health()).tool.queued, 1, 'health counts the queued call');

      await abortAndExpectRejection(controller, promise, 'queued invoke');
      const { tool: afterQueuedCancel } = await waitFor(STATE_TIMEOUT_MS,
        'the queued call to leave the queue', async () => {
          const h = await health();
          return h.tool.queued === 0 && h.tool.cancelled_while_queued === 1 ? h : null;
        }, async () => JSON.stringify((await health()).tool));
      assert.equal(afterQueuedCancel.permits_held, 1, JSON.stringify(afterQueuedCancel));
      assert.equal(afterQueuedCancel.abandoned_in_flight, 1, JSON.stringify(afterQueuedCancel));
      assert.equal(outcomes(afterQueuedCancel), 0, JSON.stringify(afterQueuedCancel));
      const left = await pendingSlowCalls();
      assert.deepEqual(left.map((c) => c.state), ['abandoned'], JSON.stringify(left));
    });

  it('3. the session survives the cancel: an echo invoke succeeds', { timeout: STEP_TIMEOUT_MS }, async () => {
    const r = await call('gateway.invoke', {
      tool_id: 'everything::echo',
      arguments: { message: ECHO_TEXT },
    });
    assert.notEqual(r.isError, true, JSON.stringify(r));
    assert.equal(r.content?.[0]?.type, 'text');
    assert.ok(r.content[0].text.includes(ECHO_TEXT), JSON.stringify(r));
    const { tool: echo } = await health('echo');
    assert.equal(echo.completed, 1, JSON.stringify(echo));
    assert.equal(echo.permits_held, 0, JSON.stringify(echo));
  });

  it('4. the abandoned call ends with exactly one outcome, and its permit is released',
    { timeout: STEP_TIMEOUT_MS }, async () => {
      // Past the end of the downstream's work the call is still abandoned and unanswered: the
      // cancel reached server-everything with an id it knows (C1), and the permit stayed
      // held all along (C2). Every poll checks it.
      const workEnds = slowSentAt + SLOW_DURATION_S * 1000 + PAST_DURATION_MS;
      let polls = 0;
      while (Date.now() < workEnds) {
        const { tool } = await health();
        ++polls;
        assert.equal(tool.permits_held, 1, `permit held while the downstream works: ${JSON.stringify(tool)}`);
        assert.equal(tool.abandoned_in_flight, 1, JSON.stringify(tool));
        assert.equal(outcomes(tool), 0,
          `server-everything drops the result of a cancelled request, so no outcome yet: ${JSON.stringify(tool)}`);
        await sleep(Math.min(250, Math.max(0, workEnds - Date.now())));
      }
      assert.ok(polls >= 2, `health was polled during the work (${polls} polls)`);

      // Only the downstream's death can end it now (C2). Kill it from outside, like a crash.
      const running = await markedEverythingProcesses();
      assert.equal(running.length, 1, `one server-everything: ${JSON.stringify(running)}`);
      process.kill(running[0].pid, 'SIGKILL');

      const { tool } = await waitFor(END_TIMEOUT_MS, 'the abandoned call to end', async () => {
        const h = await health();
        return h.tool.permits_held === 0 && h.tool.abandoned_in_flight === 0 ? h : null;
      }, async () => JSON.stringify((await health()).tool));
      assert.equal(tool.in_flight, 0, JSON.stringify(tool));
      assert.equal(tool.queued, 0, JSON.stringify(tool));
      assert.equal(outcomes(tool), 1, `exactly one outcome: ${JSON.stringify(tool)}`);
      assert.equal(tool.transport_lost, 1, `the outcome is transport_lost: ${JSON.stringify(tool)}`);
      assert.equal(tool.cancelled_while_queued, 1, JSON.stringify(tool));
      assert.deepEqual(await pendingSlowCalls(), [], 'nothing of the slow tool is pending');
      // Counted once, not again a moment later.
      assert.equal(outcomes((await health()).tool), 1, 'still exactly one outcome');

      // C4: the client never got anything for the two cancelled ids.
      assert.deepEqual(receivedFor(slowRequestId), [], 'nothing reached the client for the abandoned id');
      assert.deepEqual(receivedFor(queuedRequestId), [], 'nothing reached the client for the queued id');
      assert.equal(cancelsSentFor(queuedRequestId).length, 1, 'the SDK cancelled the queued call once');
    });

  it('5. closing the client makes sluice exit 0 and reap its downstream', { timeout: STEP_TIMEOUT_MS }, async () => {
    // client.close() ends sluice's stdin; the SDK falls back to SIGTERM after 2 s and
    // SIGKILL after 4 s. A well-behaved stdio server exits on EOF without either.
    await within(EXIT_TIMEOUT_MS, 'client.close', client.close());
    const { code, signal } = await within(EXIT_TIMEOUT_MS, 'sluice exit', exited);
    await within(EXIT_TIMEOUT_MS, 'end of sluice stderr', stderrEnded);

    await waitFor(EXIT_TIMEOUT_MS, 'no marked server-everything process to remain',
      async () => (await markedEverythingProcesses()).length === 0,
      async () => JSON.stringify(await markedEverythingProcesses()));

    const story = `\nsluice stderr:\n${stderrLog.text}`;
    assert.deepEqual(forcedSignals, [], `sluice exits on stdin EOF without being signalled${story}`);
    assert.equal(signal, null, `sluice was not killed by a signal${story}`);
    assert.equal(code, 0, `sluice exit status${story}`);
  });
});
