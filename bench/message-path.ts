/**
 * A Telegram message's path to its reply, file by file (issue 46): which of Herald's own files run for ONE plain
 * private-chat text message, from the long poll that fetches it to the `sendMessage` that answers it.
 *
 * In one process: the Telegram and OpenAI stand-ins (test/fakes) and Herald, role `all`, long polling, on a fresh
 * SQLite store and Redis prefix. A warm-up message is answered first (so start-up and first-use work are out of
 * the window); then, with V8 precise coverage and call counts on (node:inspector), for each of MESSAGE_PATH_ROUNDS
 * messages (default 3) one at a time: coverage is taken once to reset the counts, the message is injected, coverage
 * is taken again the moment the stand-in receives the reply's `sendMessage`, again when the turn's job completed,
 * and once more after an equally long window with no message.
 * The path: Herald's files (`apps/<app>/src|dist`, `packages/<package>/src|dist`) with a function called in every
 * message's window, less the files whose every called function also ran in an idle window (background work that
 * keeps landing in the window: the SQLite checkpointer's timer). The idle windows name the background work
 * (heartbeats, checkpoints, the search index) for the reader to subtract by hand where it shares a file with the path.
 * The chain (`message_chain.*`): the files on the stacks of the message's I/O (bench/io-stacks.ts) in every message,
 * less those whose every frame an idle window's I/O had on its stacks too.
 *
 * Run: npm run message-path   (= npm run build && node --conditions=@herald/dist --import tsx bench/message-path.ts)
 *   needs Redis on 127.0.0.1:6379. Prints the counts, the path's files, the background files, the idle windows'
 *   files, what ran after the reply, the path's file:function list (functions called, in file order) and the chain.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QueueEvents } from 'bullmq';
import { startFakeOpenAI } from '../test/fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../test/fakes/telegram/index.js';
import { lastUserText } from '../test/helpers/llm-tags.js';
import { deleteRedisPrefix } from '../test/helpers/cluster.js';
import { gateway } from './gateway.js';
import { type Frames, HERALD_FILE, recordIoStacks, sourceOf } from './io-stacks.js';
import { now, sleep } from './timing.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ROOT = join(import.meta.dirname, '..');
const CHAT = 4242;
const REPLY_TIMEOUT_MS = 30_000;
/**
 * Messages measured one after another (MESSAGE_PATH_ROUNDS, default 3): the path is the files every one of them ran,
 * so background work that happened to run inside one message's window is not counted.
 */
const ROUNDS = Math.max(1, Number(process.env.MESSAGE_PATH_ROUNDS ?? 3));

interface CalledFunction {
  name: string;
  line: number;
  count: number;
}
/** Herald's files (relative to the repository) with the functions called in a window, in file order. */
type Window = Map<string, CalledFunction[]>;
interface Round {
  /** From the message's injection to the reply's sendMessage. */
  message: Window;
  /** After the reply until the turn's job completed (the record of the delivery, the session released). */
  after: Window;
  /** An equally long window with no message. */
  idle: Window;
  /** The message's chain: Herald's frames on the stacks of its I/O, from its injection to the reply. */
  chain: Frames;
  /** The frames on the stacks of the idle window's I/O (the long poll, timers). */
  chainIdle: Frames;
  windowMs: number;
}

async function main(): Promise<void> {
  const llm = await startFakeOpenAI();
  llm.respondWith(async (req) => ({ text: `re: ${lastUserText(req)}` }));
  const tg = await startTelegramFake();
  const stacks = recordIoStacks(ROOT);
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
        // The path measured in bench/RESULTS.md: one plain reply (streaming became the default later).
        HERALD_STREAMING: 'false',
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
    const rounds: Round[] = [];
    for (let i = 1; i <= ROUNDS; i++) {
      await session.post('Profiler.takePreciseCoverage');
      stacks.take();
      const started = now();
      const done = turnDone();
      await say(tg, `hello, how are you? (${i})`);
      const chain = stacks.take();
      const message = await heraldFiles(session);
      const windowMs = now() - started;
      await done;
      const after = await heraldFiles(session);
      stacks.take();
      await sleep(windowMs);
      const chainIdle = stacks.take();
      rounds.push({ message, after, idle: await heraldFiles(session), chain, chainIdle, windowMs });
    }
    report(rounds);
    reportChain(rounds);
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
    const lineOf = sourceLines(path);
    const fns = called
      .map((f) => ({ name: f.functionName || '(anonymous)', line: lineOf(f.ranges[0].startOffset), count: f.ranges[0].count }))
      .sort((a, b) => a.line - b.line);
    files.set(sourceOf(file), fns);
  }
  return files;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** A character offset of a file → the 1-based line in its TypeScript source (through the compiled file's source map). */
function sourceLines(path: string): (offset: number) => number {
  const starts = lineStarts(readFileSync(path, 'utf8'));
  const map = existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as ConstructorParameters<typeof SourceMap>[0]) : null;
  return (offset) => {
    const line = lineAt(starts, offset);
    const entry = map?.findEntry(line, offset - starts[line]);
    return (entry && 'originalLine' in entry ? entry.originalLine : line) + 1;
  };
}

/** 0-based line of a character offset. */
function lineAt(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** A window's files, each with the keys of what ran in it: functions by name and line, or frames by name. */
type Keyed = Map<string, readonly string[]>;
const functionKeys = (w: Window): Keyed => new Map([...w].map(([f, fns]) => [f, fns.map((fn) => `${fn.name}:${fn.line}`)]));
const frameKeys = (w: Frames): Keyed => new Map([...w].map(([f, fns]) => [f, [...fns]]));

/**
 * The files every message's window has, and of those the background: a file whose every key, in every message, an
 * idle window had too (the checkpointer's timer) is work that keeps landing in the window, not the message's path.
 */
function steadyFiles(messages: Keyed[], idles: Keyed[]): { every: string[]; background: string[]; path: string[] } {
  const idle = new Set(idles.flatMap((w) => [...w].flatMap(([f, keys]) => keys.map((k) => `${f}:${k}`))));
  const every = [...messages[0].keys()].filter((f) => messages.every((w) => w.has(f)));
  const background = every.filter((f) => messages.every((w) => w.get(f)!.every((k) => idle.has(`${f}:${k}`))));
  return { every, background, path: every.filter((f) => !background.includes(f)) };
}

function report(rounds: Round[]): void {
  const [first] = rounds;
  const { every, background, path } = steadyFiles(
    rounds.map((r) => functionKeys(r.message)),
    rounds.map((r) => functionKeys(r.idle)),
  );
  const sometimes = [...new Set(rounds.flatMap((r) => [...r.message.keys()]))].filter((f) => !every.includes(f));
  const idle = new Set(rounds.flatMap((r) => [...r.idle.keys()]));
  const after = new Set(rounds.flatMap((r) => [...r.after.keys()]));
  const calls = (fns: CalledFunction[]): number => fns.reduce((n, fn) => n + fn.count, 0);
  const ms = rounds.map((r) => r.windowMs.toFixed(0)).join(', ');
  console.log(`# ${rounds.length} messages, one at a time; from injection to the reply's sendMessage: ${ms} ms`);
  console.log(`message_path.files = ${path.length}`);
  console.log(`message_path.functions = ${path.reduce((n, f) => n + first.message.get(f)!.length, 0)}`);
  console.log(`message_path.files_also_idle = ${path.filter((f) => idle.has(f)).length}`);
  console.log(`message_window.files_every_time = ${every.length}`);
  console.log(`message_window.files_background_only = ${background.length}`);
  console.log(`message_window.files_not_every_time = ${sometimes.length}`);
  console.log(`idle.files = ${idle.size}`);
  console.log(`after_reply.files = ${after.size}`);
  console.log('\n# the path: files every message ran (functions called / calls, first message), * when an idle window ran them too');
  for (const f of path) console.log(`${idle.has(f) ? '*' : ' '} ${f}  ${first.message.get(f)!.length}/${calls(first.message.get(f)!)}`);
  console.log(`\n# in every message's window, but only functions an idle window ran too (${background.length}): background work, not counted`);
  for (const f of background) console.log(`  ${f}`);
  console.log(`\n# in some messages' windows only (${sometimes.length}): background work that landed in a window, not counted`);
  for (const f of sometimes) console.log(`${idle.has(f) ? '*' : ' '} ${f}`);
  console.log(`\n# files of the idle windows (as long as each message's, no message): background work`);
  for (const f of idle) console.log(`  ${f}`);
  console.log(`\n# after the reply, until the turn's job completed, not on the path: ${[...after].filter((f) => !path.includes(f)).join(', ') || '—'}`);
  console.log('\n# the path, file:function (source line, calls), first message, in file order');
  for (const f of path) for (const fn of first.message.get(f)!) console.log(`${f}:${fn.name} (${fn.line}, ×${fn.count})`);
}

/**
 * The chain: Herald's files on the stacks of the message's I/O in every round (bench/io-stacks.ts), less those whose
 * every frame was also on an idle window's stacks (the long poll's own wait), by the same rule as the path. A file
 * that only answered a question and returned before any I/O (a row converted, a shape checked) is on the path above
 * but not on the chain.
 */
function reportChain(rounds: Round[]): void {
  const [first] = rounds;
  const { path: chain } = steadyFiles(
    rounds.map((r) => frameKeys(r.chain)),
    rounds.map((r) => frameKeys(r.chainIdle)),
  );
  const hops = chain.flatMap((f) => [...first.chain.get(f)!].map((fn) => `${f}:${fn}`));
  console.log(`\nmessage_chain.files = ${chain.length}`);
  console.log(`message_chain.frames = ${hops.length}`);
  console.log("\n# the chain: files on the stacks of the message's I/O in every message (functions on those stacks, first message)");
  for (const f of chain) console.log(`  ${f}  ${[...first.chain.get(f)!].join(', ')}`);
}

await main();
process.exit(0);
