/**
 * The SDK transport for one server config: a child process over stdio (started by this process, so every worker
 * runs its own), or Streamable HTTP with the configured headers. A stdio server's stderr is kept as its last few
 * lines, which say why it exited far better than "connection closed" does.
 */
import type { Readable } from 'node:stream';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from '../../support/config/mcp.js';

const STDERR_LINES_KEPT = 5;
const STDERR_LINE_MAX = 300;

export interface OpenedTransport {
  transport: Transport;
  kind: 'stdio' | 'http';
  /** The last lines the server wrote to stderr (stdio), newest last. */
  stderrTail(): string[];
}

export function openTransport(config: McpServerConfig, onStderrLine: (line: string) => void): OpenedTransport {
  if (config.url !== undefined) {
    const transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    return { transport, kind: 'http', stderrTail: () => [] };
  }
  // Only a few harmless variables are inherited (PATH, HOME, …): the gateway's own tokens never reach a server.
  const transport = new StdioClientTransport({
    command: config.command as string,
    args: config.args,
    env: { ...getDefaultEnvironment(), ...config.env },
    cwd: config.cwd,
    stderr: 'pipe',
  });
  const tail: string[] = [];
  let partial = '';
  (transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    if (partial.length > STDERR_LINE_MAX) partial = partial.slice(-STDERR_LINE_MAX);
    for (const raw of lines) {
      const line = raw.trim().slice(0, STDERR_LINE_MAX);
      if (!line) continue;
      tail.push(line);
      if (tail.length > STDERR_LINES_KEPT) tail.shift();
      onStderrLine(line);
    }
  });
  return { transport, kind: 'stdio', stderrTail: () => (partial.trim() ? [...tail, partial.trim()] : [...tail]) };
}
