// End-to-end test of both protocol eras with the official TypeScript SDKs, in one run:
// @modelcontextprotocol/client 2.x pinned to the 2026-07-28 era (no initialize, per-request
// _meta, input_required results fulfilled by its own handlers) and @modelcontextprotocol/sdk
// 1.x in the 2025 era, both driving one `sluice serve --transport http`, which fronts the
// reference server @modelcontextprotocol/server-everything (a 2025 server: it asks its client
// for sampling with a server-to-client request, which sluice's era bridge turns into an
// input_required result for the 2026 client). All pinned in package.json.
//
//   bash tests/e2e/run.sh build/src/sluice
//
// sluice runs on a free loopback port with its own state directory and HOME; the test ends by
// sending it SIGTERM: it must exit 0 and leave no process behind. Every await is bounded.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { markedProcesses, startSluiceHttp, stopSluiceHttp, waitFor, within } from './helpers.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SLUICE_BINARY = process.env.SLUICE_BINARY;
const EVERYTHING_ENTRY = path.join(
  HERE, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
// server-everything 2026.8.31: dist/tools/echo.js (`message`, answers "Echo: <message>");
// dist/tools/trigger-sampling-request.js (`prompt`, `maxTokens`; sends sampling/createMessage
// whose first message's text contains the prompt, and returns
// "LLM sampling result: \n<the client's result as JSON>").
const SAMPLING_TOOL = 'trigger-sampling-request';

const REQUEST_TIMEOUT_MS = 20_000;
const START_TIMEOUT_MS = 15_000;
const EXIT_TIMEOUT_MS = 10_000;
const STEP_TIMEOUT_MS = 120_000;
const MARKER_NAME = 'SLUICE_E2E_MARKER';
const MARKER_VALUE = `e2e-eras-${randomBytes(6).toString('hex')}`;

describe('both protocol eras through one sluice, with the official SDKs', { timeout: STEP_TIMEOUT_MS }, () => {
  let workDir;
  let sluice;
  const clients = [];

  before(async () => {
    assert.ok(SLUICE_BINARY, 'SLUICE_BINARY is not set (run through tests/e2e/run.sh)');
    workDir = await mkdtemp(path.join(tmpdir(), 'sluice-e2e-eras-'));
    const configFile = path.join(workDir, 'mcp.json');
    // The call the -32021 case cancels keeps its permit until server-everything answers it,
    // which an SDK server never does for a cancelled request: the drain at exit is kept short,
    // and the server's write lane is wide enough for the later calls of tools that are not
    // read-only (simulate-research-query) meanwhile.
    await writeFile(configFile, `${JSON.stringify({
      sluice: { drainMs: 500, writesPerServer: 4 },
      mcpServers: {
        everything: {
          command: process.execPath,
          args: [EVERYTHING_ENTRY, 'stdio'],
          env: { [MARKER_NAME]: MARKER_VALUE },
        },
      },
    }, null, 2)}\n`);
    sluice = await startSluiceHttp({
      binary: SLUICE_BINARY, configFile, workDir, args: ['--expose', 'all', '--passthrough'],
      env: { [MARKER_NAME]: MARKER_VALUE }, timeoutMs: START_TIMEOUT_MS,
    });
  });

  after(async () => {
    for (const client of clients) {
      try { await within(EXIT_TIMEOUT_MS, 'client.close', client.close()); } catch { /* reported by its test */ }
    }
    if (sluice) {
      const exit = await stopSluiceHttp(sluice, EXIT_TIMEOUT_MS);
      assert.deepEqual(exit, { code: 0, signal: null }, `sluice's exit; stderr:\n${sluice.output.stderr}`);
    }
    await waitFor(EXIT_TIMEOUT_MS, 'no process of this test left',
      async () => ((await markedProcesses(MARKER_NAME, MARKER_VALUE)).length === 0 ? true : null));
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  // A 2.x client pinned to 2026-07-28, declaring `capabilities`; its sampling handler answers
  // `reply` and records what it was asked.
  async function modernClient(name, capabilities, reply = 'unused') {
    const asked = [];
    const client = new ModernClient({ name, version: '1.0.0' }, {
      capabilities,
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    });
    if (capabilities.sampling) {
      client.setRequestHandler('sampling/createMessage', async (request) => {
        asked.push(request.params);
        return { role: 'assistant', content: { type: 'text', text: reply }, model: 'e2e-model', stopReason: 'endTurn' };
      });
    }
    clients.push(client);
    await within(REQUEST_TIMEOUT_MS, `${name}: connect`,
      client.connect(new ModernTransport(new URL(sluice.url)), { timeout: REQUEST_TIMEOUT_MS }));
    return { client, asked };
  }

  it('a 2026-07-28 client calls tools, and answers a 2025 server\'s sampling through input_required', async () => {
    const { client, asked } = await modernClient('modern', { sampling: {} }, 'The capital is Paris.');
    const tools = await within(REQUEST_TIMEOUT_MS, 'tools/list', client.listTools());
    const names = tools.tools.map((t) => t.name);
    assert.ok(names.includes('echo') && names.includes(SAMPLING_TOOL), `tools: ${names.join(', ')}`);

    const echoed = await within(REQUEST_TIMEOUT_MS, 'echo',
      client.callTool({ name: 'echo', arguments: { message: 'no session' } }));
    assert.equal(echoed.content[0].text, 'Echo: no session');

    // The server's sampling request reaches the client as an input_required result; the SDK
    // fulfils it with its handler and retries with the requestState, and the call completes.
    const sampled = await within(REQUEST_TIMEOUT_MS, SAMPLING_TOOL, client.callTool({
      name: SAMPLING_TOOL, arguments: { prompt: 'Which city is the capital of France?', maxTokens: 50 },
    }));
    assert.equal(asked.length, 1, 'the handler was asked once');
    assert.match(JSON.stringify(asked[0].messages), /capital of France/);
    assert.match(sampled.content[0].text, /The capital is Paris\./);
  });

  it('a 2026-07-28 client that did not declare sampling gets -32021 instead of a question', async () => {
    const { client } = await modernClient('modern-no-sampling', {});
    await assert.rejects(
      within(REQUEST_TIMEOUT_MS, SAMPLING_TOOL, client.callTool({
        name: SAMPLING_TOOL, arguments: { prompt: 'anything', maxTokens: 10 },
      })),
      (err) => err.code === -32021 && err.data?.requiredCapabilities?.sampling !== undefined,
    );
  });

  // One 2026-07-28 request by hand (the tasks extension's requests): its result, or throws
  // with its JSON-RPC error.
  let nextId = 1;
  async function modernRequest(method, params, name) {
    const headers = {
      'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method,
    };
    if (name !== undefined) headers['Mcp-Name'] = name;
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'e2e-tasks', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {
        elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} },
      },
    };
    const response = await within(REQUEST_TIMEOUT_MS, method, fetch(sluice.url, {
      method: 'POST', headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } }),
    }));
    const text = await response.text();
    const body = JSON.parse(text.startsWith('event:') ? text.match(/^data: (.*)$/m)[1] : text);
    if (body.error) throw Object.assign(new Error(body.error.message), body.error);
    return body.result;
  }
  async function taskReaches(taskId, statuses) {
    return waitFor(STEP_TIMEOUT_MS / 2, `task ${taskId} reaches ${statuses.join(' or ')}`, async () => {
      const task = await modernRequest('tasks/get', { taskId }, taskId);
      return statuses.includes(task.status) ? task : null;
    });
  }

  it('a 2026-07-28 client follows a 2025 server\'s task tool as a task, answering its question with tasks/update', async () => {
    // server-everything's simulate-research-query runs only as a (2025-11-25) task: sluice
    // calls it task-augmented, and the 2026 client follows it as a task of sluice's.
    const created = await modernRequest('tools/call',
      { name: 'simulate-research-query', arguments: { topic: 'python', ambiguous: true } },
      'simulate-research-query');
    assert.equal(created.resultType, 'task', JSON.stringify(created));
    assert.match(created.taskId, /^task-/);
    const asking = await taskReaches(created.taskId, ['input_required', 'completed', 'failed']);
    assert.equal(asking.status, 'input_required', JSON.stringify(asking));
    const [key, question] = Object.entries(asking.inputRequests)[0];
    assert.equal(question.method, 'elicitation/create');
    const ack = await modernRequest('tasks/update', {
      taskId: created.taskId,
      inputResponses: { [key]: { action: 'accept', content: { interpretation: 'programming' } } },
    }, created.taskId);
    assert.equal(ack.resultType, 'complete');
    const done = await taskReaches(created.taskId, ['completed', 'failed', 'cancelled']);
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.match(done.result.content[0].text, /Research Report: python \(programming\)/);
  });

  it('a 2025 client (SDK 1.x) initializes a session on the same endpoint', async () => {
    const client = new LegacyClient({ name: 'legacy', version: '1.0.0' });
    clients.push(client);
    const transport = new LegacyTransport(new URL(sluice.url));
    await within(REQUEST_TIMEOUT_MS, 'legacy: connect + initialize',
      client.connect(transport, { timeout: REQUEST_TIMEOUT_MS }));
    assert.ok(transport.sessionId, 'a 2025 client gets a session');
    const echoed = await within(REQUEST_TIMEOUT_MS, 'legacy echo',
      client.callTool({ name: 'echo', arguments: { message: 'with session' } }));
    assert.equal(echoed.content[0].text, 'Echo: with session');
    assert.equal(echoed.resultType, undefined, 'a 2025 result has no resultType');
    // A tool the server runs only as a task is one plain call to a 2025 client of sluice.
    const research = await within(STEP_TIMEOUT_MS / 2, 'legacy simulate-research-query',
      client.callTool({ name: 'simulate-research-query', arguments: { topic: 'rust' } }, undefined,
        { timeout: STEP_TIMEOUT_MS / 2 }));
    assert.match(research.content[0].text, /Research Report: rust/, JSON.stringify(research));
    assert.ok(!research.isError, JSON.stringify(research));
  });
});
