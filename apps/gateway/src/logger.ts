/**
 * One root pino logger. JSON by default (what log shippers want), pretty when a person watches a terminal.
 * Units of work get children: `log.child({ platform, sessionKey, jobId })`.
 */
import { pino, type Logger, type DestinationStream } from 'pino';
import { secretPaths } from './config/load.js';

export type { Logger };

/** Keys that hold secrets wherever they appear in a logged object. */
const SECRET_KEYS = ['token', 'botToken', 'appToken', 'apiKey', 'signingSecret', 'webhookSecret', 'adminToken', 'authorization', 'password'];

export function redactPaths(): string[] {
  const paths = new Set<string>();
  for (const p of secretPaths()) {
    paths.add(p); // config.telegram.botToken logged as the whole config object
    paths.add(`config.${p}`);
  }
  for (const k of SECRET_KEYS) {
    paths.add(k);
    paths.add(`*.${k}`);
    paths.add(`*.*.${k}`);
  }
  paths.add('req.headers.authorization');
  paths.add('headers.authorization');
  return [...paths];
}

export interface LoggerOptions {
  level?: string;
  /** Force pretty or JSON; default: pretty when stdout is a TTY. */
  pretty?: boolean;
  destination?: DestinationStream;
  /**
   * Secret values to scrub from every line, wherever they appear: SDK errors quote request URLs, and
   * Telegram's URLs carry the bot token (`/bot<token>/getMe`), which path-based redaction cannot catch.
   */
  secrets?: string[];
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const pretty = opts.pretty ?? (process.stdout.isTTY === true && !opts.destination);
  const base = {
    level: opts.level ?? 'info',
    base: { pid: process.pid },
    redact: { paths: redactPaths(), censor: '[redacted]' },
    hooks: { streamWrite: scrubber(opts.secrets ?? []) },
  };
  if (opts.destination) return pino(base, opts.destination);
  if (pretty) return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } });
  return pino(base);
}

function scrubber(secrets: string[]): (line: string) => string {
  const values = [...new Set(secrets.filter((s) => s.length >= 6))].sort((a, b) => b.length - a.length);
  if (values.length === 0) return (line) => line;
  const re = new RegExp(values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (line) => line.replace(re, '[redacted]');
}
