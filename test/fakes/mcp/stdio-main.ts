/**
 * The test MCP server over stdio: `node --import tsx test/fakes/mcp/stdio-main.ts <label>`. The gateway starts it
 * as a child process, one per worker. With TEST_MCP_PID_FILE set (the server's `env` in the config) it writes its pid
 * there, so a test can kill it from outside.
 */
import { writeFileSync } from 'node:fs';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { buildTestServer } from './server.js';

const label = process.argv[2] ?? 'stdio';
if (process.env.TEST_MCP_PID_FILE) writeFileSync(process.env.TEST_MCP_PID_FILE, String(process.pid));
await buildTestServer(label).connect(new StdioServerTransport());
process.stderr.write(`test mcp server ${label} listening on stdio\n`);
