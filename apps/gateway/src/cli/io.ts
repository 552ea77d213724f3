/** Where CLI commands write (and read an answer from), so tests can capture it; and the error that means "say this and exit 2". */
import { createInterface } from 'node:readline/promises';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Prints pretty JSON and returns exit code 0. */
  json(value: unknown): number;
  /** Asks on the terminal and resolves with the line typed, or null when standard input ends without one. */
  ask(question: string): Promise<string | null>;
}

/** A mistake in how the command was called (or what it named): one line on stderr, exit code 2. */
export class CliError extends Error {
  override name = 'CliError';
}

export const processIo: CliIo = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
  json(value) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return 0;
  },
  async ask(question) {
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY === true });
    const ended = new Promise<null>((resolve) => rl.once('close', () => resolve(null)));
    try {
      return await Promise.race([rl.question(question), ended]);
    } finally {
      rl.close();
      // A piped answer is not echoed: end the question's line so the next output starts on its own.
      if (process.stdin.isTTY !== true) process.stdout.write('\n');
    }
  },
};
