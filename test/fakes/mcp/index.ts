/**
 * The test MCP servers for the gateway's tests: how to start the stdio one (the gateway spawns it from its config)
 * and a Streamable HTTP one in a child process a test can kill and start again on the same port.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export { BIG_RESULT_CHARS, LARGE_PNG_BASE64, LARGE_PNG_BYTES, PIXEL_PNG_BASE64 } from './server.js';

const TSX = import.meta.resolve('tsx');
const STDIO_MAIN = join(import.meta.dirname, 'stdio-main.ts');
const HTTP_MAIN = join(import.meta.dirname, 'http-main.ts');

/** `command` and `args` of a gateway config entry that starts the stdio test server. */
export function stdioServer(label: string): { command: string; args: string[] } {
  return { command: process.execPath, args: ['--import', TSX, STDIO_MAIN, label] };
}

export interface HttpMcpServer {
  url: string;
  port: number;
  proc: ChildProcess;
  /** Kills the process (SIGKILL by default) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** A new process on the same port (after kill). */
  restart(): Promise<HttpMcpServer>;
}

export async function startHttpMcpServer(token: string, port = 0): Promise<HttpMcpServer> {
  const proc = spawn(process.execPath, ['--import', TSX, HTTP_MAIN, String(port), token], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const listening = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout! });
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as { listening?: number };
      if (parsed.listening) resolve(parsed.listening);
    });
    void exited.then(() => reject(new Error('the HTTP MCP test server exited before listening')));
  });
  return {
    url: `http://127.0.0.1:${listening}/mcp`,
    port: listening,
    proc,
    kill: async (signal = 'SIGKILL') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
    restart: () => startHttpMcpServer(token, listening),
  };
}
