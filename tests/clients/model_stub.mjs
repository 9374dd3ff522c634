// A stand-in for the OpenAI Responses API on a loopback port, for `codex exec`: it records the
// tools each request offers the model and answers every turn with one assistant message, so
// Codex finishes without a model, a key or a network. `codex mcp list` only prints the config;
// the tools in the first request are what shows that Codex started sluice and listed its tools.
import http from 'node:http';

// Starts the stand-in; resolves to { url, requests, close }. requests: [{ path, tools }], where
// tools are the names Codex offered (a namespace's tools as "namespace/tool").
export function startModelStub() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url.endsWith('/responses')) {
        res.writeHead(404).end();
        return;
      }
      let parsed = {};
      try {
        parsed = JSON.parse(body);
      } catch {
        // An unreadable request is recorded with no tools; the test then fails on them.
      }
      requests.push({ path: req.url, tools: toolNames(parsed.tools ?? []) });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = (type, data) =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      event('response.created', { response: { id: 'resp_stub' } });
      event('response.output_item.done', {
        item: {
          type: 'message',
          role: 'assistant',
          id: 'msg_stub',
          content: [{ type: 'output_text', text: 'done' }],
        },
      });
      event('response.completed', {
        response: {
          id: 'resp_stub',
          usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
        },
      });
      res.end();
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
        requests,
        close: () => new Promise((done) => server.close(done)),
      });
    });
  });
}

function toolNames(tools) {
  const names = [];
  for (const tool of tools) {
    if (tool.type === 'namespace') {
      for (const inner of tool.tools ?? []) names.push(`${tool.name}/${inner.name}`);
    } else if (tool.name) {
      names.push(tool.name);
    }
  }
  return names;
}
