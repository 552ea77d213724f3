/**
 * The test MCP server over Streamable HTTP (stateful sessions), in a process of its own so a test can kill it:
 * `node --import tsx test/fakes/mcp/http-main.ts <port> <bearer token>`. Every request must carry
 * `Authorization: Bearer <token>` (401 otherwise, as a real server would answer); prints `{"listening":<port>}`.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ToolList, buildTestServer } from './server.js';

const [portArg = '0', token = ''] = process.argv.slice(2);
const sessions = new Map<string, StreamableHTTPServerTransport>();
const tools = new ToolList();

const http = createServer((req, res) => {
  void (async () => {
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' }).end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (!transport) {
      if (typeof sid === 'string') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await buildTestServer('http', tools).connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  })().catch((err: unknown) => {
    process.stderr.write(`request failed: ${String(err)}\n`);
    if (!res.headersSent) res.writeHead(500).end();
  });
});
http.listen(Number(portArg), '127.0.0.1', () => {
  const addr = http.address();
  process.stdout.write(`${JSON.stringify({ listening: typeof addr === 'object' && addr ? addr.port : 0 })}\n`);
});
