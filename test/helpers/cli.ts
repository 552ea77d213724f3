/**
 * Runs the `herald` command as a user does: `node apps/gateway/bin/herald.js …` with plain node (the bin registers
 * tsx itself), in an isolated environment; optionally typing `input` on its standard input.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { isolatedEnv } from './gateway.js';

export const HERALD_BIN = resolve(import.meta.dirname, '../../apps/gateway/bin/herald.js');
const CLI_TIMEOUT_MS = 30_000;

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Non-empty stdout lines. */
  lines: string[];
}

export function runHerald(args: string[], opts: { env?: Record<string, string>; cwd: string; input?: string }): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(process.execPath, [HERALD_BIN, ...args], { cwd: opts.cwd, env: isolatedEnv(opts.env) });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString('utf8')));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString('utf8')));
    proc.stdin.end(opts.input ?? '');
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`herald ${args.join(' ')} did not exit within ${CLI_TIMEOUT_MS} ms:\n${stdout}\n${stderr}`));
    }, CLI_TIMEOUT_MS);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, lines: stdout.split('\n').filter(Boolean) });
    });
  });
}
