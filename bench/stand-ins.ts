/**
 * The benchmark's stand-ins, in their own process so the measured process holds only Herald:
 * an OpenAI stand-in (answers at once, or after `LLM_DELAY_MS`) and a Telegram Bot API stand-in as the egress.
 * Talks to the parent over IPC: sends {ready, llmUrl, tgUrl, tgToken}; on {type:'cpu'} replies with its own CPU time
 * (ms); on {type:'times'} replies with the
 * timestamps (ms, performance.timeOrigin-based) at which each tagged LLM request arrived and each reply was sent
 * (every tag is unique within a run, so nothing is cleared).
 */
import { startFakeOpenAI } from '../test/fakes/llm/index.js';
import { startTelegramFake } from '../test/fakes/telegram/index.js';
import { lastUserText } from '../test/helpers/llm-tags.js';
import { now } from './timing.js';

const delayMs = Number(process.env.LLM_DELAY_MS ?? 0);

const llmIn = new Map<string, number>();
const llmOut = new Map<string, number>();
const sentAt = new Map<string, number>();

const llm = await startFakeOpenAI();
llm.respondWith(async (req) => {
  const text = lastUserText(req);
  if (process.env.BENCH_DEBUG) console.error('llm <-', JSON.stringify(text).slice(0, 120));
  llmIn.set(text, now());
  if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  llmOut.set(text, now());
  return { text: `re: ${text}` };
});
// The requests list would grow by thousands of bodies; the benchmark only needs the timestamps above.
const requests = llm.requests;
setInterval(() => requests.splice(0, requests.length), 1_000).unref();

const tg = await startTelegramFake();
// The Bot API only answers chats it knows: the parent names the private chats its users write from (and each
// chat gets the user's message the replies answer).
process.on('message', (m: { type: string; ids?: number[] }) => {
  if (m.type !== 'chats') return;
  for (const id of m.ids ?? []) {
    const chat = tg.world.ensureChat(id, 'private');
    // The user's message every benchmark message names (platformMessageId '1'), so a reply to it finds it.
    if (chat.messages.has(1)) continue;
    chat.messages.set(1, { message_id: 1, date: 0, chat: { id, type: 'private' }, text: 'hi' });
    chat.nextMessageId = Math.max(chat.nextMessageId, 2);
  }
});
const push = tg.sent.push.bind(tg.sent);
tg.sent.push = (...items) => {
  if (process.env.BENCH_DEBUG) for (const s of items) console.error('tg <-', s.method, JSON.stringify(s.text ?? '').slice(0, 120));
  for (const s of items) if (s.method === 'sendMessage' && s.text?.startsWith('re: ')) sentAt.set(s.text.slice(4), now());
  // Keep memory flat over thousands of sends.
  if (tg.sent.length > 1_000) tg.sent.splice(0, tg.sent.length);
  if (tg.calls.length > 1_000) tg.calls.splice(0, tg.calls.length);
  return push(...items);
};

process.on('message', (m: { type: string }) => {
  if (m.type === 'await') {
    const { tags, timeoutMs } = m as unknown as { tags: string[]; timeoutMs: number };
    const deadline = Date.now() + timeoutMs;
    const look = (): void => {
      const answered = tags.filter((t) => sentAt.has(t)).length;
      if (answered === tags.length || Date.now() > deadline) process.send?.({ type: 'awaited', done: answered === tags.length, answered });
      else setTimeout(look, 20);
    };
    look();
  } else if (m.type === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send?.({ type: 'cpu', ms: (user + system) / 1000 });
  } else if (m.type === 'count') {
    process.send?.({ type: 'count', n: sentAt.size });
  } else if (m.type === 'times') {
    process.send?.({ type: 'times', llmIn: [...llmIn], llmOut: [...llmOut], sentAt: [...sentAt] });
  } else if (m.type === 'stop') {
    void Promise.all([llm.close(), tg.close()]).then(() => process.exit(0));
  }
});
// Never outlive the benchmark.
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready', llmUrl: llm.url, tgUrl: tg.url, tgToken: tg.token });
