/**
 * A Telegram message's path to its reply, file by file (issue 46): which of Herald's own files run for ONE plain
 * private-chat text message, from the long poll that fetches it to the `sendMessage` that answers it.
 *
 * In one process: the Telegram and OpenAI stand-ins (test/fakes) and Herald, role `all`, long polling, on a fresh
 * SQLite store and Redis prefix. A warm-up message is answered first (so start-up and first-use work are out of
 * the window); then V8 precise coverage with call counts (node:inspector) is taken once to reset the counts, one
 * message is injected, and coverage is taken again the moment the stand-in receives the reply's `sendMessage`.
 * Herald's files (`apps/<app>/src|dist`, `packages/<package>/src|dist`) with a function called at least once are the path.
 * The same measurement over an equally long window with no message says which files are background work
 * (heartbeats, lock renewals, the janitor, checkpoints), to subtract.
 *
 * Run: npm run message-path   (= npm run build && node --conditions=@herald/dist --import tsx bench/message-path.ts)
 *   needs Redis on 127.0.0.1:6379. Prints the message window's files, the idle window's, the files only the message
 *   ran, their counts, and the message window's file:function list (functions called, in file order).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QueueEvents } from 'bullmq';
import { startFakeOpenAI } from '../test/fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../test/fakes/telegram/index.js';
import { lastUserText } from '../test/helpers/llm-tags.js';
import { deleteRedisPrefix } from '../test/helpers/cluster.js';
import { gateway } from './gateway.js';
import { now, sleep } from './timing.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = join(import.meta.dirname, '..');
/** Herald's own code: the gateway and the workspace packages, compiled or from source. */
const HERALD_FILE = /^(apps|packages)\/[^/]+\/(src|dist)\//;
const CHAT = 4242;
const REPLY_TIMEOUT_MS = 30_000;

interface CalledFunction {
  name: string;
  line: number;
  count: number;
}
/** Herald's files (relative to the repository) with the functions called in a window, in file order. */
type Window = Map<string, CalledFunction[]>;

async function main(): Promise<void> {
  const llm = await startFakeOpenAI();
  llm.respondWith(async (req) => ({ text: `re: ${lastUserText(req)}` }));
  const tg = await startTelegramFake();
  const dir = mkdtempSync(join(tmpdir(), 'herald-path-'));
  const prefix = `herald-path-${process.pid}-${Date.now().toString(36)}`;
  const { app, config, logger } = await gateway();
  const herald = await app.startHerald(
    config.loadConfig({
      file: null,
      env: {
        REDIS_URL,
        HERALD_REDIS_PREFIX: prefix,
        HERALD_DB: join(dir, 'herald.db'),
        HERALD_PORT: '0',
        HERALD_MODEL: 'openai:gpt-4.1-mini',
        OPENAI_API_KEY: 'sk-path',
        OPENAI_BASE_URL: llm.url,
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        GATEWAY_ALLOW_ALL_USERS: 'true',
      },
    }),
    logger.createLogger({ level: process.env.BENCH_LOG ?? 'silent' }),
  );
  // The turn's wake-up job completing is the end of its turn (what runs after the reply: the record of its delivery,
  // the mailbox acknowledged, the session released), so the idle window starts with nothing of the message left.
  const jobs = new QueueEvents('turns', { connection: { url: REDIS_URL }, prefix });
  await jobs.waitUntilReady();
  const turnDone = (): Promise<void> => new Promise((resolve) => jobs.once('completed', () => resolve()));
  const session = new Session();
  session.connect();
  try {
    const warmedUp = turnDone();
    await say(tg, 'warm-up');
    await warmedUp;
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage');
    const started = now();
    const done = turnDone();
    await say(tg, 'hello, how are you?');
    const message = await heraldFiles(session);
    const windowMs = now() - started;
    await done;
    const after = await heraldFiles(session);
    await sleep(windowMs);
    const idle = await heraldFiles(session);
    report(message, idle, windowMs);
    console.log(`\n# after the reply, until the turn's job completed (${after.size} files): ${[...after.keys()].join(', ')}`);
  } finally {
    session.disconnect();
    await jobs.close();
    await herald.stop();
    await Promise.all([llm.close(), tg.close()]);
    await deleteRedisPrefix(prefix, REDIS_URL);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A user writes `text` in the private chat; resolves the moment the stand-in receives the reply's sendMessage. */
function say(tg: TelegramFake, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply to ${JSON.stringify(text)} within ${REPLY_TIMEOUT_MS} ms`)), REPLY_TIMEOUT_MS);
    const push = tg.sent.push.bind(tg.sent);
    tg.sent.push = (...items) => {
      const n = push(...items);
      if (items.some((s) => s.method === 'sendMessage' && s.text === `re: ${text}`)) {
        tg.sent.push = push;
        clearTimeout(timer);
        resolve();
      }
      return n;
    };
    tg.injectMessage({ chatId: CHAT, userId: CHAT, text });
  });
}

/** Herald's files with a function called since the last take (which resets the counts). */
async function heraldFiles(session: Session): Promise<Window> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files: Window = new Map();
  for (const script of result) {
    if (!script.url.startsWith('file:')) continue;
    const path = fileURLToPath(script.url);
    const file = relative(ROOT, path);
    if (!HERALD_FILE.test(file)) continue;
    const called = script.functions.filter((f) => f.ranges[0].count > 0);
    if (called.length === 0) continue;
    const lines = lineStarts(readFileSync(path, 'utf8'));
    const fns = called
      .map((f) => ({ name: f.functionName || '(anonymous)', line: lineOf(lines, f.ranges[0].startOffset), count: f.ranges[0].count }))
      .sort((a, b) => a.line - b.line);
    files.set(sourceOf(file), fns);
  }
  return files;
}

/** The TypeScript file a compiled one comes from (the paths the architecture doc names). */
const sourceOf = (file: string): string => file.replace(/\/dist\//, '/src/').replace(/\.js$/, '.ts');

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line of a character offset (the compiled file's line: tsc keeps the source's layout closely). */
function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function report(message: Window, idle: Window, windowMs: number): void {
  const only = [...message.keys()].filter((f) => !idle.has(f));
  const both = [...message.keys()].filter((f) => idle.has(f));
  const idleOnly = [...idle.keys()].filter((f) => !message.has(f));
  const calls = (w: Window, f: string): number => w.get(f)!.reduce((n, fn) => n + fn.count, 0);
  console.log(`# one message, ${windowMs.toFixed(0)} ms from injection to the reply's sendMessage`);
  console.log(`message_path.files = ${message.size}`);
  console.log(`message_path.functions = ${[...message.values()].reduce((n, fns) => n + fns.length, 0)}`);
  console.log(`idle.files = ${idle.size}`);
  console.log(`message_path.files_not_idle = ${only.length}`);
  console.log('\n# files of the message window (functions called / calls), marked * when the idle window ran them too');
  for (const f of message.keys()) console.log(`${idle.has(f) ? '*' : ' '} ${f}  ${message.get(f)!.length}/${calls(message, f)}`);
  console.log(`\n# files of the idle window (${windowMs.toFixed(0)} ms, no message): background work`);
  for (const f of idle.keys()) console.log(`  ${f}  ${idle.get(f)!.length}/${calls(idle, f)}`);
  console.log(`\n# in both windows (${both.length}): background work, unless the message also needs them`);
  console.log(`# only in the idle window (${idleOnly.length}): ${idleOnly.join(', ') || '—'}`);
  console.log('\n# the message window, file:function (line, calls), in file order');
  for (const [f, fns] of message) for (const fn of fns) console.log(`${f}:${fn.name} (${fn.line}, ×${fn.count})`);
}

await main();
process.exit(0);
