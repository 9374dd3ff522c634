// The client under test for the conformance suite's client scenarios (run.sh client): sluice, driven
// through its stdio front end. The runner spawns `node adapter.mjs <url>` with
// MCP_CONFORMANCE_SCENARIO, MCP_CONFORMANCE_PROTOCOL_VERSION and sometimes MCP_CONFORMANCE_CONTEXT
// (JSON) set; SLUICE_BINARY names the binary (run.sh exports it). This adapter writes a sluice
// config whose only server, "remote", is {"type": "http", "url": <url>} (plus an "oauth" object
// built from the context), starts `sluice serve --expose all` in a temporary HOME and state
// directory, and plays the part of sluice's own client: initialize, tools/list, and the one call
// the scenario needs. It never speaks to the scenario's server itself: every request the server
// sees comes from sluice. OAuth is sluice's job too: the adapter only supplies the settings a
// user would write in the server entry.
//
// Exit status: 0 when sluice initialized, the scenario's steps ran and sluice exited 0 once its
// stdin was closed; 1 otherwise (the reason is on stderr, with the tail of sluice's log).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The SDK the pinned alpha suite depends on (alpha/node_modules), not the stable one that a bare
// specifier would find first in tests/conformance/node_modules.
import { Client } from '../alpha/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js';
import { ReadBuffer, serializeMessage } from
  '../alpha/node_modules/@modelcontextprotocol/sdk/dist/esm/shared/stdio.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from
  '../alpha/node_modules/@modelcontextprotocol/sdk/dist/esm/types.js';

const kServer = 'remote';
const kCimdUrl = 'https://conformance-test.local/client-metadata.json';
// sluice lists a remote server's tools once it has connected; on a loaded CI machine every
// scenario runs at once, so the bound is generous (the runner's own is 60 s a scenario).
const kToolWaitMs = 40000;
const kCallTimeoutMs = 25000;
const kExitGraceMs = 10000;  // sluice must exit on its own once stdin is closed
// Scenarios whose server lists no tool: the listing is all there is to do.
const kNoTools = new Set(['initialize', 'request-metadata']);

const url = process.argv[2];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const sluice = process.env.SLUICE_BINARY;
if (!url || !sluice) {
  console.error('usage: SLUICE_BINARY=... node adapter.mjs URL');
  process.exit(2);
}

// The "oauth" object of the server entry, from the scenario's context: the settings a user would
// write (docs/configuration.md, "OAuth for protected remote servers"); none when there is nothing
// to set (dynamic registration needs no settings). Only auth/* scenarios get one. The protocol
// version sluice speaks is its own: MCP_CONFORMANCE_PROTOCOL_VERSION is not passed on.
function oauthSettings() {
  if (!scenario.startsWith('auth/')) return undefined;
  let context = {};
  if (process.env.MCP_CONFORMANCE_CONTEXT) context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT);
  const oauth = {};
  if (context.client_id) oauth.clientId = context.client_id;
  if (context.client_secret) oauth.clientSecret = context.client_secret;
  if (scenario === 'auth/basic-cimd') oauth.clientMetadataUrl = kCimdUrl;
  // Else sluice's own absolute default, http://127.0.0.1:<port>/callback.
  if (context.redirect_uri) oauth.redirectUri = context.redirect_uri;
  if (Array.isArray(context.scopes)) oauth.scopes = context.scopes;
  return Object.keys(oauth).length > 0 ? oauth : undefined;
}

// A stdio transport over a child we spawn ourselves (the SDK's StdioClientTransport kills its
// child after 2 s and does not report the exit status, which this adapter must check).
class SluiceProcess {
  constructor(command, args, env) {
    this.command = command;
    this.args = args;
    this.env = env;
    this.buffer = new ReadBuffer();
    this.stderrTail = '';
    this.exited = new Promise((resolve) => { this.resolveExit = resolve; });
  }

  async start() {
    this.child = spawn(this.command, this.args, { env: this.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (chunk) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-8000);
    });
    this.child.stdout.on('data', (chunk) => {
      this.buffer.append(chunk);
      for (;;) {
        let message;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.child.stdin.on('error', (error) => this.onerror?.(error));
    this.child.on('close', (code, signal) => {
      this.resolveExit({ code, signal });
      this.onclose?.();
    });
    await new Promise((resolve, reject) => {
      this.child.once('spawn', resolve);
      this.child.once('error', reject);
    });
  }

  async send(message) {
    if (!this.child.stdin.write(serializeMessage(message))) {
      await new Promise((resolve) => this.child.stdin.once('drain', resolve));
    }
  }

  // Closes sluice's stdin only: sluice must then shut down by itself.
  async close() {
    this.child.stdin.end();
  }

  kill() {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

// tools/list until the remote server's tools are there (sluice connects to it in the background
// and announces them with notifications/tools/list_changed), bounded. The initialize scenario's
// server lists none: one listing is enough there.
async function remoteTools(client, changed) {
  const deadline = kNoTools.has(scenario) ? 0 : Date.now() + kToolWaitMs;
  for (;;) {
    const { tools } = await client.listTools();
    const mine = tools.filter((t) => t.name.startsWith(`${kServer}__`));
    if (mine.length > 0 || Date.now() >= deadline) return mine;
    await Promise.race([changed.next(), new Promise((r) => setTimeout(r, 250))]);
  }
}

function findTool(tools, name) {
  return tools.find((t) => t.name === `${kServer}__${name}`);
}

async function call(client, tool, args) {
  if (!tool) throw new Error('the scenario\'s tool is not in sluice\'s tools/list');
  const result = await client.callTool({ name: tool.name, arguments: args }, undefined,
                                       { timeout: kCallTimeoutMs });
  if (result.isError) console.error(`adapter: ${tool.name} answered isError`);
  return result;
}

// The scenario's steps, once sluice has initialized and listed the remote tools.
async function drive(client, tools) {
  switch (scenario) {
    case 'initialize':
      return;
    case 'tools_call':
      await call(client, findTool(tools, 'add_numbers'), { a: 5, b: 3 });
      return;
    case 'json-schema-2020-12-preservation': {
      const focal = findTool(tools, 'json_schema_2020_12_tool');
      if (!focal) throw new Error('json_schema_2020_12_tool is not in sluice\'s tools/list');
      await call(client, findTool(tools, 'json_schema_echo'), { schema: focal.inputSchema });
      return;
    }
    case 'sse-retry':
      await call(client, findTool(tools, 'test_reconnection'), {});
      return;
    case 'elicitation-sep1034-client-defaults':
      await call(client, findTool(tools, 'test_client_elicitation_defaults'), {});
      return;
    case 'request-metadata':
      return;
    case 'sep-2322-client-request-state':
      // Input required, with and without a requestState, a plain call after them, and a result
      // without resultType: sluice asks this client (its elicitation handler) and retries.
      for (const name of ['test_mrtr_echo_state', 'test_mrtr_no_state', 'test_mrtr_unrelated',
                          'test_mrtr_no_result_type']) {
        await call(client, findTool(tools, name), {});
      }
      return;
    case 'http-custom-headers': {
      // The calls the scenario's context names, with their arguments as given.
      const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
      for (const { name, arguments: args } of context.toolCalls ?? []) {
        await call(client, findTool(tools, name), args ?? {});
      }
      return;
    }
    case 'http-invalid-tool-headers':
      // Only the valid tool is listed by sluice; the scenario checks it was called.
      await call(client, findTool(tools, 'valid_tool'), { region: 'us-west1' });
      return;
    default:
      // auth/*: a call after the listing (auth/scope-step-up challenges tools/call only).
      await call(client, tools[0], {});
  }
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-conformance-client-'));
  const entry = { type: 'http', url };
  const oauth = oauthSettings();
  if (oauth) entry.oauth = oauth;
  const config = join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { [kServer]: entry } }));
  mkdirSync(join(dir, 'state'));

  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, XDG_STATE_HOME: join(dir, 'xdg') };
  const transport = new SluiceProcess(sluice, [
    'serve', '--expose', 'all', '--no-discover', '--no-cache', '--state-dir', join(dir, 'state'),
    '--config', config, '--log-level', process.env.SLUICE_LOG_LEVEL ?? 'info',
  ], env);

  // The end user's client: it shows sluice's relayed elicitation form and accepts it untouched,
  // leaving the defaults to the form (SEP-1034: applyDefaults); sampling is declared so that a
  // server's sampling request is relayed rather than refused.
  const client = new Client({ name: 'sluice-conformance-adapter', version: '1.0.0' },
                            { capabilities: { elicitation: { form: { applyDefaults: true } }, sampling: {} } });
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: {} }));
  const waiters = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    for (const w of waiters.splice(0)) w();
  });
  const changed = { next: () => new Promise((resolve) => waiters.push(resolve)) };

  let failure;
  try {
    await client.connect(transport);
    const tools = await remoteTools(client, changed);
    console.error(`adapter: sluice lists ${tools.length} tool(s) of "${kServer}"`);
    if (tools.length === 0 && !kNoTools.has(scenario)) {
      throw new Error(`sluice listed no tool of "${kServer}" within ${kToolWaitMs} ms`);
    }
    await drive(client, tools);
  } catch (error) {
    failure = error;
  }

  await transport.close();
  const timer = setTimeout(() => transport.kill(), kExitGraceMs);
  const { code, signal } = await transport.exited;
  clearTimeout(timer);
  rmSync(dir, { recursive: true, force: true });

  if (failure || code !== 0) {
    if (failure) console.error(`adapter: ${failure.message ?? failure}`);
    if (code !== 0) console.error(`adapter: sluice exited with ${code ?? `signal ${signal}`}`);
    console.error(`--- sluice stderr (tail) ---\n${transport.stderrTail}`);
    process.exit(1);
  }
  console.error('adapter: done, sluice exited 0');
}

await main();
