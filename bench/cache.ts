/**
 * The prompt-cache benchmark: one 30-turn Telegram conversation through the real gateway process (compiled, as
 * `npm start` runs it) against LLM stand-ins that model the providers' prompt caches (test/fakes/llm/prompt-cache.ts),
 * once per wire API: Chat Completions, Responses and Anthropic Messages. The conversation has what a team's has:
 * tool calls every third turn, a memory note written mid-way, a photo, a model fallback, a compression before a
 * turn at 85 % of the context window, and a `/new`.
 *
 * Figures, per API (`cache.<api>.*`): `hit_ratio` = cached ÷ input tokens of the conversation's model calls after
 * the first turn (the goal: ≥ 0.90); `side_hit_ratio` the same for side tasks (titles, summaries, the flush);
 * `calls`, `input_tokens`, `compressions`, `fallback_calls`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from '../test/fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../test/fakes/telegram/index.js';
import { startGateway } from '../test/helpers/gateway.js';

interface Api {
  name: string;
  model: string;
  fallback: string;
  auxiliary: string;
}

const APIS: Api[] = [
  { name: 'chat', model: 'openai:gpt-4.1-mini', fallback: 'openai:gpt-4.1', auxiliary: 'openai:gpt-4.1-nano' },
  { name: 'responses', model: 'openai-responses:gpt-5-mini', fallback: 'openai-responses:gpt-5', auxiliary: 'openai:gpt-4.1-nano' },
  { name: 'anthropic', model: 'anthropic:claude-sonnet-4-5', fallback: 'anthropic:claude-opus-4-1', auxiliary: 'anthropic:claude-haiku-4-5' },
];

const TURNS = 30;
const MEMORY_TURN = 15;
const PHOTO_TURN = 10;
const FALLBACK_TURN = 20;
const NEW_BEFORE_TURN = 27;
/** Small enough that the conversation passes 85 % of it before the `/new`. */
const CONTEXT_WINDOW = Number(process.env.BENCH_CACHE_WINDOW ?? 14_000);
const CHAT = 4242;
/** A chat message's size, and an answer's (about 100 and 300 tokens). */
const USER_CHARS = 400;
const ANSWER_CHARS = 1_200;
const TURN_TIMEOUT_MS = 60_000;

const wireName = (model: string): string => model.slice(model.indexOf(':') + 1);
/** About `chars` characters of deterministic prose. */
const prose = (seed: string, chars: number): string => {
  const words = ['cache', 'prefix', 'session', 'worker', 'queue', 'reply', 'token', 'model', 'history', 'tool'];
  let out = seed;
  for (let i = 0; out.length < chars; i++) out += ` ${words[(i * 7 + seed.length) % words.length]}`;
  return out;
};

/** Whether the request's last item is a tool's result, in any of the three wire formats. */
function afterToolResult(req: RecordedRequest): boolean {
  const items = (req.body.messages ?? req.body.input ?? []) as Array<Record<string, unknown>>;
  const last = items.at(-1);
  if (!last) return false;
  if (last.role === 'tool' || last.type === 'function_call_output') return true;
  return Array.isArray(last.content) && (last.content as Array<{ type?: string }>).some((b) => b.type === 'tool_result');
}

interface Conversation {
  turn: number;
  /** Request index at which each turn began (turn 1 at index of turnStarts[1]). */
  turnStarts: Map<number, number>;
}

function responder(api: Api, conv: Conversation): (req: RecordedRequest) => Step {
  const primary = wireName(api.model);
  return (req) => {
    const model = String(req.body.model);
    if (model === wireName(api.auxiliary)) return { text: prose(`Summary of the conversation so far (turn ${conv.turn}).`, 1_200) };
    if (conv.turn === FALLBACK_TURN && model === primary) return { error: { status: 429, retryAfter: 30 } };
    if (afterToolResult(req)) return { text: prose(`Answer ${conv.turn}: done with the tool.`, ANSWER_CHARS) };
    if (conv.turn === MEMORY_TURN) {
      return {
        toolCalls: [
          {
            id: `call_mem_${conv.turn}`,
            name: 'memory',
            arguments: JSON.stringify({ action: 'add', target: 'memory', content: 'The team deploys on Tuesdays.' }),
          },
        ],
      };
    }
    if (conv.turn % 3 === 0) return { toolCalls: [{ id: `call_time_${conv.turn}`, name: 'current_time', arguments: '{}' }] };
    return { text: prose(`Answer ${conv.turn}:`, ANSWER_CHARS) };
  };
}

/** Sends one message and waits for the answer that names its turn (or, for a command, any new message). */
async function say(tg: TelegramFake, text: string, expect: string | null, photo = false): Promise<void> {
  const before = tg.sent.length;
  tg.injectMessage({ chatId: CHAT, userId: CHAT, ...(photo ? { photo: true, caption: text } : { text }) });
  await tg.waitFor(() => tg.sent.slice(before).some((s) => (expect === null ? s.method === 'sendMessage' : (s.text ?? '').includes(expect))), TURN_TIMEOUT_MS);
}

interface Totals {
  total: number;
  read: number;
  calls: number;
}
const ratio = (t: Totals): number => (t.total === 0 ? 0 : t.read / t.total);

async function runConversation(api: Api): Promise<Record<string, number>> {
  const openai = await startFakeOpenAI({ promptCache: true });
  const anthropic = await startFakeAnthropic({ promptCache: true });
  const tg = await startTelegramFake();
  const conv: Conversation = { turn: 0, turnStarts: new Map() };
  const llms: FakeLLM[] = [openai, anthropic];
  const respond = responder(api, conv);
  for (const llm of llms) llm.respondWith(async (req) => respond(req));
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-cache-'));
  const gw = await startGateway({
    compiled: true,
    dataDir,
    env: {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.url,
      GATEWAY_ALLOW_ALL_USERS: 'true',
      HERALD_LOG_LEVEL: 'info',
      HERALD_USER_RATE_LIMIT: '0',
      // Every built-in tool, as a team that lets the agent research, delegate and ask runs it.
      HERALD_TOOLSETS: 'full',
      HERALD_MODEL: api.model,
      HERALD_FALLBACK_MODELS: api.fallback,
      HERALD_AUXILIARY_MODEL: api.auxiliary,
      OPENAI_API_KEY: 'sk-bench',
      OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: 'sk-ant-bench',
      ANTHROPIC_BASE_URL: anthropic.url,
      HERALD_CONTEXT_WINDOW: String(CONTEXT_WINDOW),
      // Compress before a turn (at 85 %), not inside one: the benchmark's compression is the one users meet most.
      HERALD_COMPRESSION_THRESHOLD: '0.8',
    },
  });
  const requests = (): RecordedRequest[] => [...openai.requests, ...anthropic.requests].sort((a, b) => a.startedAt - b.startedAt);
  try {
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn === NEW_BEFORE_TURN) await say(tg, '/new', null);
      conv.turn = turn;
      conv.turnStarts.set(turn, requests().length);
      await say(tg, prose(`Question ${turn}:`, USER_CHARS), `Answer ${turn}:`, turn === PHOTO_TURN).catch((err: unknown) => {
        const sent = tg.sent.slice(-3).map((x) => `${x.method}: ${(x.text ?? '').slice(0, 80)}`);
        throw new Error(`${api.name}, turn ${turn}: no answer (${String(err)}); last sent: ${sent.join(' | ')}; log:\n${gw.output.slice(-15).join('\n')}`);
      });
    }
    // Side tasks after the last answer (the title, a review) finish before the figures are read.
    await tg.waitFor(() => openai.activeRequests() + anthropic.activeRequests() === 0, TURN_TIMEOUT_MS);
  } finally {
    await gw.stop();
    await Promise.all([tg.close(), ...llms.map((l) => l.close())]);
  }
  // Sessions ended by a compression (before a turn or inside one), read from the store the gateway left.
  const db = new Database(gw.dbPath, { readonly: true });
  const compressions = (db.prepare("SELECT count(*) AS n FROM sessions WHERE end_reason = 'compression'").get() as { n: number }).n;
  db.close();
  rmSync(dataDir, { recursive: true, force: true });
  const all = requests();
  const firstAfterTurnOne = conv.turnStarts.get(2) ?? all.length;
  const main: Totals = { total: 0, read: 0, calls: 0 };
  const side: Totals = { total: 0, read: 0, calls: 0 };
  let fallbackCalls = 0;
  all.forEach((req, i) => {
    if (!req.cache) return;
    const model = String(req.body.model);
    const isSide = model === wireName(api.auxiliary);
    if (model === wireName(api.fallback)) fallbackCalls++;
    if (process.env.BENCH_DEBUG) console.error(`${i} ${model} total=${req.cache.total} read=${req.cache.cacheRead} write=${req.cache.cacheWrite}`);
    if (i < firstAfterTurnOne) return;
    const into = isSide ? side : main;
    into.total += req.cache.total;
    into.read += req.cache.cacheRead;
    into.calls++;
  });
  return {
    hit_ratio: ratio(main),
    side_hit_ratio: ratio(side),
    calls: main.calls,
    side_calls: side.calls,
    input_tokens: main.total,
    cached_tokens: main.read,
    fallback_calls: fallbackCalls,
    compressions,
  };
}

/** Every API's conversation, one after another; figures printed as `cache.<api>.<name>`. */
export async function benchCache(): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  for (const api of APIS.filter((a) => !process.env.BENCH_CACHE_API || a.name === process.env.BENCH_CACHE_API)) {
    const f = await runConversation(api);
    for (const [k, v] of Object.entries(f)) {
      figures[`${api.name}.${k}`] = v;
      console.log(`cache.${api.name}.${k} = ${Number.isInteger(v) ? v : v.toFixed(3)}`);
    }
  }
  return figures;
}
