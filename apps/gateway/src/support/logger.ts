/**
 * One root pino logger. JSON by default (what log shippers want), pretty when a person watches a terminal.
 * Units of work get children: `log.child({ platform, sessionKey, jobId })`.
 */
import { format } from 'node:util';
import { pino, type Logger, type DestinationStream } from 'pino';
import { secretPaths } from './config/load.js';
import { SessionLogFiles } from './session-logs.js';

export type { Logger };

/** Keys that hold secrets wherever they appear in a logged object. */
const SECRET_KEYS = ['token', 'botToken', 'appToken', 'apiKey', 'signingSecret', 'webhookSecret', 'adminToken', 'authorization', 'password'];

export function redactPaths(): string[] {
  const paths = new Set<string>();
  for (const p of secretPaths()) {
    paths.add(p); // config.telegram.botToken logged as the whole config object
    paths.add(`config.${p}`);
  }
  // Top-level secret keys here; nested ones, at any depth, in the line itself (secretKeysRedacted): a path that
  // begins with a wildcard (`*.token`) makes pino run the whole redaction over every child logger's bindings —
  // ≈ 11 KB of garbage per child, four children per message, with the log level off as much as on.
  for (const k of SECRET_KEYS) paths.add(k);
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
  /** HERALD_SESSION_LOG_DIR: also write each conversation's lines to a file of its own there (support/session-logs.ts). */
  sessionLogDir?: string;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const pretty = opts.pretty ?? (process.stdout.isTTY === true && !opts.destination);
  const base = {
    level: opts.level ?? 'info',
    base: { pid: process.pid },
    redact: { paths: redactPaths(), censor: '[redacted]' },
    hooks: { streamWrite: secretScrubber(opts.secrets ?? []) },
  };
  if (opts.sessionLogDir) {
    const out = opts.destination ?? pino.destination({ dest: 1, sync: true });
    return pino(
      base,
      pino.multistream([
        { stream: out, level: 'trace' },
        { stream: new SessionLogFiles(opts.sessionLogDir), level: 'trace' },
      ]),
    );
  }
  if (opts.destination) return pino(base, opts.destination);
  if (pretty) return pino({ ...base, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss' } } });
  return pino(base);
}

/** A secret key (SECRET_KEYS) anywhere in a JSON line, as a key; with its string value (the fallback below). */
const SECRET_KEY_IN_LINE = new RegExp(`"(?:${SECRET_KEYS.join('|')})":`);
const SECRET_KEY_STRING_VALUE = new RegExp(`(${SECRET_KEY_IN_LINE.source})"(?:[^"\\\\]|\\\\.)*"`, 'g');
const SECRET_KEY_NAMES: ReadonlySet<string> = new Set(SECRET_KEYS);

/**
 * The line with the value of every secret key censored, however deep it sits in the logged object. Only a line that
 * names such a key is parsed and written again; the rest pass as they are.
 */
export function secretKeysRedacted(line: string): string {
  if (!SECRET_KEY_IN_LINE.test(line)) return line;
  try {
    const censor = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(censor);
      if (value === null || typeof value !== 'object') return value;
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY_NAMES.has(k) ? '[redacted]' : censor(v)]));
    };
    return `${JSON.stringify(censor(JSON.parse(line)))}${line.endsWith('\n') ? '\n' : ''}`;
  } catch {
    // Not one JSON object (never from pino): every string value of a secret key, at least.
    return line.replace(SECRET_KEY_STRING_VALUE, '$1"[redacted]"');
  }
}

/**
 * Every written line: secret-named keys censored at any depth, then every configured secret replaced as given, as a
 * JSON string escapes it (a token with `"` or `\` inside a logged value), and percent-encoded (a base64 token with
 * `+/=` in a logged URL).
 */
export function secretScrubber(secrets: string[]): (line: string) => string {
  const forms = secrets.filter((s) => s.length >= 6).flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]);
  const values = [...new Set(forms)].sort((a, b) => b.length - a.length);
  if (values.length === 0) return secretKeysRedacted;
  const re = new RegExp(values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
  return (line) => secretKeysRedacted(line).replace(re, '[redacted]');
}

/** How long a repeated library warning stays quiet after it was logged once. */
const CONSOLE_REPEAT_QUIET_MS = 10 * 60_000;

/**
 * Libraries write to the console on their own (the Anthropic SDK warns on every request to a model it lists as
 * deprecated). Routed through the logger those lines stay JSON, are scrubbed of secrets, and a repeated one is
 * logged once per ten minutes instead of once per request. Returns a function that restores the console.
 */
export function routeConsoleToLogger(log: Logger, now: () => number = Date.now): () => void {
  const original = { warn: console.warn, error: console.error };
  const lastLogged = new Map<string, number>();
  const route =
    (level: 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const text = format(...args);
      const at = now();
      const last = lastLogged.get(text);
      if (last !== undefined && at - last < CONSOLE_REPEAT_QUIET_MS) return;
      if (lastLogged.size > 1_000) lastLogged.clear();
      lastLogged.set(text, at);
      log[level]({ from: 'console' }, text);
    };
  console.warn = route('warn');
  console.error = route('error');
  return () => {
    console.warn = original.warn;
    console.error = original.error;
  };
}
