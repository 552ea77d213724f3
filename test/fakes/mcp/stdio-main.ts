/**
 * The test MCP server over stdio: `node --import tsx test/fakes/mcp/stdio-main.ts <label>`. The gateway starts it
 * as a child process, one per worker.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildTestServer } from './server.js';

const label = process.argv[2] ?? 'stdio';
await buildTestServer(label).connect(new StdioServerTransport());
process.stderr.write(`test mcp server ${label} listening on stdio\n`);
