/**
 * The `herald` command (apps/gateway/bin/herald.js loads this from dist/ in production, through tsx in development):
 *   herald start [--role all|ingress|worker]   run the gateway (same as `npm start`)
 *   herald doctor                              check config, Redis, the store, platform tokens and models
 *   herald pairing list|approve|revoke          the owner's side of pairing
 *   herald sessions list|show|search            read sessions and transcripts
 *   herald chat [--resume <session id>]         an interactive chat in the terminal, streaming
 *   herald store migrate --to postgres://…      copy a SQLite store into PostgreSQL
 *   herald store backup|restore <file>          a consistent copy of the SQLite store, and putting one back
 * `--config <herald.yaml>` works with every command. Exit codes: 0 ok, 1 a check or action failed, 2 usage.
 */
import { ConfigError, loadConfig } from '../support/config/load.js';
import { HERALD_COMMAND } from '../support/herald-command.js';
import { VERSION } from '../support/version.js';
import { doctor } from './doctor.js';
import { CliError, processIo, type CliIo } from './io.js';
import { PAIRING_USAGE, pairingCommand } from './pairing.js';
import { SESSIONS_USAGE, sessionsCommand } from './sessions.js';
import { CHAT_USAGE, chatCommand } from './chat.js';
import { STORE_USAGE, storeCommand } from './store.js';

export const USAGE = `Herald ${VERSION}: chat with one LLM agent from Telegram, Discord and Slack.

${HERALD_COMMAND} start [--role all|ingress|worker] [--config herald.yaml]
${HERALD_COMMAND} doctor [--config herald.yaml]
${PAIRING_USAGE}
${SESSIONS_USAGE}
${CHAT_USAGE}
${STORE_USAGE}`;

/** Runs one command; resolves with the exit code, or null when the gateway was started and keeps running. */
export async function run(argv: string[], io: CliIo = processIo): Promise<number | null> {
  const { configFile, rest } = takeConfigOption(argv);
  const [command, ...args] = rest;
  try {
    switch (command) {
      case 'start': {
        // Loaded only here: the gateway pulls in every platform SDK, which the other commands never need.
        const { main } = await import('../main.js');
        await main(configFile ? [...args, '--config', configFile] : args);
        return null;
      }
      case 'doctor':
        if (args.length > 0) throw new CliError(`herald doctor takes no arguments (got ${args.join(' ')})`);
        return await doctor({ configFile, out: io.out });
      case 'pairing':
        return await pairingCommand(args, loadConfig({ file: configFile }), io);
      case 'sessions':
        return await sessionsCommand(args, loadConfig({ file: configFile }), io);
      case 'chat':
        try {
          return await chatCommand(args, loadConfig({ file: configFile }), io, { input: process.stdin, write: (t) => void process.stdout.write(t) });
        } finally {
          // /exit with the terminal (or a pipe) still open: let go of it, or the process would wait on it.
          process.stdin.destroy();
        }
      case 'store':
        return await storeCommand(args, loadConfig({ file: configFile }), io);
      case '--version':
      case 'version':
        io.out(VERSION);
        return 0;
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return 0;
      case undefined:
        io.err(USAGE);
        return 2;
      default:
        throw new CliError(`unknown command "${command}"; run \`${HERALD_COMMAND} help\``);
    }
  } catch (err) {
    if (err instanceof CliError) io.err(err.message);
    else if (err instanceof ConfigError) io.err(`Configuration error: ${err.message}`);
    else if (isParseArgsError(err)) io.err(err.message);
    else throw err;
    return 2;
  }
}

function takeConfigOption(argv: string[]): { configFile?: string; rest: string[] } {
  const rest: string[] = [];
  let configFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--config') configFile = argv[++i];
    else if (a.startsWith('--config=')) configFile = a.slice('--config='.length);
    else rest.push(a);
  }
  return { configFile, rest };
}

/** node:util parseArgs rejects unknown options with a TypeError carrying an ERR_PARSE_ARGS_* code. */
function isParseArgsError(err: unknown): err is Error {
  const code = err instanceof TypeError ? (err as NodeJS.ErrnoException).code : undefined;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}
