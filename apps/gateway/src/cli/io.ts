/** Where CLI commands write, so tests can capture it; and the error that means "say this and exit 2". */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Prints pretty JSON and returns exit code 0. */
  json(value: unknown): number;
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
};
