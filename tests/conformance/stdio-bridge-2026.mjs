// A minimal HTTP-to-stdio bridge for the 2026-07-28 (stateless) era, so that the official suite
// (which speaks HTTP only) can drive sluice's stdio front end. Test tooling, not part of sluice.
//
//   node stdio-bridge-2026.mjs PORT_FILE COMMAND [ARG...]
//
// Listens on 127.0.0.1 (a free port, written to PORT_FILE) and runs COMMAND once, its stdin and
// stdout newline-delimited JSON-RPC. Each POSTed request is written to the child as one line;
// the child's answer with that id answers the POST (JSON, or SSE when the client accepts it).
// The child's notifications go on the stream of the request they belong to: a listen stream by
// its subscriptionId, a call by its progressToken, otherwise the only request waiting. A client
// that closes its request first has it cancelled (notifications/cancelled), as the revision's
// HTTP transport makes a closed stream a cancel. HTTP statuses as the revision's transport
// gives them: 404 for -32601, 400 for -32020/-32021/-32022 and for sluice's _meta refusals.
// The HTTP headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) are not checked here: stdio has
// none, so those checks belong to an HTTP front end, not to the stdio one under test.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import readline from 'node:readline';

const [portFile, command, ...args] = process.argv.slice(2);
if (!portFile || !command) {
  console.error('usage: stdio-bridge-2026.mjs PORT_FILE COMMAND [ARG...]');
  process.exit(2);
}

const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
child.on('exit', (code) => process.exit(code ?? 1));
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => child.kill('SIGTERM'));
}

// Requests waiting for their answer, by JSON.stringify(id).
const pending = new Map();

function statusOf(message) {
  const error = message.error;
  if (!error || typeof error.code !== 'number') return 200;
  if (error.code === -32601) return 404;
  if ([-32020, -32021, -32022].includes(error.code)) return 400;
  if (error.code === -32602 && String(error.message).startsWith('Invalid params: _meta')) return 400;
  return 200;
}

function streamEvent(entry, line) {
  if (!entry.streaming) {
    entry.streaming = true;
    entry.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  }
  entry.res.write(`event: message\ndata: ${line}\n\n`);
}

function answer(entry, message, line) {
  pending.delete(entry.key);
  if (entry.streaming) {
    streamEvent(entry, line);
    entry.res.end();
    return;
  }
  entry.res.writeHead(statusOf(message), { 'Content-Type': 'application/json' });
  entry.res.end(line);
}

function owner(message) {
  const meta = message.params?._meta ?? {};
  const subscription = meta['io.modelcontextprotocol/subscriptionId'];
  if (subscription !== undefined) return pending.get(JSON.stringify(subscription));
  const token = message.params?.progressToken;
  if (token !== undefined) {
    for (const entry of pending.values()) {
      if (JSON.stringify(entry.progressToken) === JSON.stringify(token)) return entry;
    }
    return undefined;
  }
  return pending.size === 1 ? pending.values().next().value : undefined;
}

readline.createInterface({ input: child.stdout }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id !== undefined && ('result' in message || 'error' in message)) {
    const entry = pending.get(JSON.stringify(message.id));
    if (entry) answer(entry, message, line);
    return;
  }
  if (message.method && message.id === undefined) {
    const entry = owner(message);
    if (entry?.sse) streamEvent(entry, line);
  }
});

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
      return;
    }
    if (message.id === undefined || message.method === undefined) {
      child.stdin.write(body.replace(/\n/g, ' ') + '\n');
      res.writeHead(202).end();
      return;
    }
    const key = JSON.stringify(message.id);
    const entry = {
      key,
      res,
      sse: String(req.headers.accept ?? '').includes('text/event-stream'),
      streaming: false,
      progressToken: message.params?._meta?.progressToken,
    };
    pending.set(key, entry);
    res.on('close', () => {
      if (pending.get(key) === entry) {
        pending.delete(key);
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: message.id } }) + '\n');
      }
    });
    child.stdin.write(JSON.stringify(message) + '\n');
  });
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
