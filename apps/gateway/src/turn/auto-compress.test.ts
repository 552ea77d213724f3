import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import {
  ProviderError,
  SUMMARY_PREFIX,
  SessionStore,
  emptyUsage,
  type ChatMessage,
  type CompletionRequest,
  type CompletionResult,
  type Provider,
  type Session,
} from '@herald/agent-core';
import { NOTHING_TO_COMPRESS_NOTICE, STILL_LARGE_WARNING, TOO_SHORT_NOTICE, autoCompressIfNeeded, needsCompression } from './auto-compress.js';
import { persistTurn } from './stages/record.js';

const KEY = 'agent:main:telegram:dm:42';
const log = pino({ level: 'silent' });
const stores: SessionStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** A provider that writes `summary`, or fails with `error`, and records the requests. */
function summarizer(opts: { summary?: string; error?: ProviderError; onCall?: () => void } = {}) {
  const requests: CompletionRequest[] = [];
  const provider: Provider = {
    name: 'openai',
    model: 'gpt-4.1-mini',
    apiMode: 'chat_completions',
    complete: async (req): Promise<CompletionResult> => {
      requests.push(req);
      opts.onCall?.();
      if (opts.error) throw opts.error;
      const text = opts.summary ?? 'THE-SUMMARY';
      return { message: { role: 'assistant', content: text }, finishReason: 'stop', usage: { ...emptyUsage(), input: 300, output: 40 }, model: 'gpt-4.1-mini' };
    },
  };
  return { provider, requests };
}

function chat(n: number, chars = 20): ChatMessage[] {
  return Array.from({ length: n }, (_, i): ChatMessage => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i} ${'w'.repeat(chars)}` }));
}

/** A store with one telegram session under KEY holding `messages`, with the given last prompt size. */
async function sessionWith(messages: ChatMessage[], lastPromptTokens?: number, title?: string): Promise<{ store: SessionStore; session: Session }> {
  const store = await SessionStore.open(':memory:');
  stores.push(store);
  const { session } = await store.getOrCreateSession(KEY, {
    source: 'telegram',
    userId: '42',
    chatId: '42',
    model: 'openai:gpt-4.1-mini',
    systemPrompt: 'Be brief.',
  });
  await store.appendMessages(session.id, messages);
  if (lastPromptTokens !== undefined) await store.addUsage(session.id, { ...emptyUsage(), lastPromptTokens });
  if (title) await store.setTitle(session.id, title);
  return { store, session: (await store.getSession(session.id)) as Session };
}

describe('the 85 % rule', () => {
  it('window 100K: not at 50K tokens, yes at 85K and at 90K', async () => {
    expect(needsCompression(50_000, 40, 100_000)).toBe(false);
    expect(needsCompression(84_999, 40, 100_000)).toBe(false);
    expect(needsCompression(85_000, 40, 100_000)).toBe(true);
    expect(needsCompression(90_000, 40, 100_000)).toBe(true);
  });

  it('window 200K: compresses from 170,000 tokens', async () => {
    expect(needsCompression(169_999, 40, 200_000)).toBe(false);
    expect(needsCompression(170_000, 40, 200_000)).toBe(true);
  });

  it('never under 4 messages; 300 tiny messages do not trigger it, 400 do', async () => {
    expect(needsCompression(199_000, 3, 200_000)).toBe(false);
    expect(needsCompression(300, 300, 200_000)).toBe(false);
    expect(needsCompression(400, 400, 200_000)).toBe(true);
  });
});

describe('autoCompressIfNeeded', () => {
  it('past 85 %: one summary call, a child session (parent, source, title #2) with the key on it, the old one ended', async () => {
    const { store, session } = await sessionWith(chat(40, 4_000), 90_000, 'Trip');
    const { provider, requests } = summarizer();
    const r = await autoCompressIfNeeded({ store, sessionKey: KEY, session, provider, contextWindow: 100_000, log });
    expect(r.compressed).toBe(true);
    expect(requests).toHaveLength(1);
    expect(r.notice).toBe('🗜️ Compressed the conversation to keep it going (40 → 24 messages).');
    expect(r.warning).toBeUndefined();

    const child = r.session;
    expect(child.id).not.toBe(session.id);
    expect(child).toMatchObject({
      parentSessionId: session.id,
      source: 'telegram',
      key: KEY,
      userId: '42',
      chatId: '42',
      systemPrompt: 'Be brief.',
      title: 'Trip #2',
      endedAt: null,
    });
    expect((await store.currentSession(KEY))?.id).toBe(child.id);
    expect(await store.getSession(session.id)).toMatchObject({ endReason: 'compression', messageCount: 40 });

    const history = await store.getHistory(child.id);
    expect(history).toHaveLength(24);
    expect(history.slice(0, 3)).toEqual(chat(40, 4_000).slice(0, 3));
    expect(history[3].content).toContain(SUMMARY_PREFIX);
    expect(history[3].content).toContain('THE-SUMMARY');
    expect(history.map((m) => m.content).join()).not.toContain('m10 ');
    expect(history.slice(-20)).toEqual(chat(40, 4_000).slice(-20));
    expect(child.outputTokens).toBe(40);
  });

  it('below 85 % (and under 400 messages) nothing happens: no model call, same session', async () => {
    const { store, session } = await sessionWith(chat(300, 5));
    const { provider, requests } = summarizer();
    const r = await autoCompressIfNeeded({ store, sessionKey: KEY, session, provider, contextWindow: 200_000, log });
    expect(r).toEqual({ compressed: false, session });
    expect(requests).toHaveLength(0);
  });

  it('without a reported prompt size, characters / 4 of the history decide', async () => {
    const { store, session } = await sessionWith(chat(40, 1_000)); // ~ 10K tokens
    const { provider } = summarizer();
    expect((await autoCompressIfNeeded({ store, sessionKey: KEY, session, provider, contextWindow: 100_000, log })).compressed).toBe(false);
    expect((await autoCompressIfNeeded({ store, sessionKey: KEY, session, provider, contextWindow: 11_000, log })).compressed).toBe(true);
  });

  it('warns when the history is still at 95 % of the window after compressing', async () => {
    const { store, session } = await sessionWith(chat(40, 1_000), 4_900);
    const r = await autoCompressIfNeeded({ store, sessionKey: KEY, session, provider: summarizer().provider, contextWindow: 5_000, log });
    expect(r.compressed).toBe(true);
    expect(r.warning).toBe(STILL_LARGE_WARNING);
  });

  it('when the summary call fails, it still compresses with the excerpt summary', async () => {
    const { store, session } = await sessionWith(chat(40, 4_000), 90_000);
    const { provider } = summarizer({ error: new ProviderError('server_error', 'upstream died', { status: 502 }) });
    const r = await autoCompressIfNeeded({ store, sessionKey: KEY, session, provider, contextWindow: 100_000, log });
    expect(r.compressed).toBe(true);
    const summary = (await store.getHistory(r.session.id))[3].content ?? '';
    expect(summary).toContain('the summary could not be written (upstream died)');
    expect(summary).toContain('m19 ');
  });

  it('runs the before-compression hook first, and only when compressing', async () => {
    const order: string[] = [];
    const { provider } = summarizer({ onCall: () => order.push('summary') });
    const beforeCompress = async () => void order.push('flush');
    const small = await sessionWith(chat(10));
    await autoCompressIfNeeded({ ...small, sessionKey: KEY, provider, contextWindow: 100_000, log, beforeCompress });
    expect(order).toEqual([]);
    const big = await sessionWith(chat(40, 4_000), 90_000);
    await autoCompressIfNeeded({ ...big, sessionKey: KEY, provider, contextWindow: 100_000, log, beforeCompress });
    expect(order).toEqual(['flush', 'summary']);
  });

  it('no flush when the compression then finds nothing to summarise (a few big messages past 85 %, or /compress on a short one)', async () => {
    let flushes = 0;
    const beforeCompress = async () => void flushes++;
    const { provider, requests } = summarizer();
    const few = await sessionWith(chat(8, 40_000), 95_000);
    expect((await autoCompressIfNeeded({ ...few, sessionKey: KEY, provider, contextWindow: 100_000, log, beforeCompress })).compressed).toBe(false);
    const short = await sessionWith(chat(6));
    const forced = await autoCompressIfNeeded({ ...short, sessionKey: KEY, provider, contextWindow: 100_000, log, force: true, beforeCompress });
    expect(forced.notice).toBe(NOTHING_TO_COMPRESS_NOTICE);
    expect(flushes).toBe(0);
    expect(requests).toHaveLength(0);
  });

  it('force (/compress): needs 4 messages, then keeps the head and the last 4 messages', async () => {
    const { provider, requests } = summarizer();
    const tiny = await sessionWith(chat(3));
    expect(await autoCompressIfNeeded({ ...tiny, sessionKey: KEY, provider, contextWindow: 100_000, log, force: true })).toEqual({
      compressed: false,
      session: tiny.session,
      notice: TOO_SHORT_NOTICE,
    });
    const short = await sessionWith(chat(6));
    expect((await autoCompressIfNeeded({ ...short, sessionKey: KEY, provider, contextWindow: 100_000, log, force: true })).notice).toBe(
      NOTHING_TO_COMPRESS_NOTICE,
    );
    expect(requests).toHaveLength(0);

    const some = await sessionWith(chat(12));
    const r = await autoCompressIfNeeded({ ...some, sessionKey: KEY, provider, contextWindow: 100_000, log, force: true });
    expect(r.notice).toBe('🗜️ Compressed the conversation to keep it going (12 → 8 messages).');
    expect((await some.store.getHistory(r.session.id)).slice(-4)).toEqual(chat(12).slice(-4));
  });
});

describe('persistTurn', () => {
  it('appends the turn, or moves a turn that compressed inside the loop into a child session', async () => {
    const { store, session } = await sessionWith(chat(4));
    const turn: ChatMessage[] = [
      { role: 'user', content: 'next' },
      { role: 'assistant', content: 'sure' },
    ];
    const same = await persistTurn(store, { sessionKey: KEY, session, result: { newMessages: turn }, turnId: 't1', platformMessageId: '9' });
    expect(same.id).toBe(session.id);
    expect(await store.getHistory(session.id)).toHaveLength(6);

    const compacted: ChatMessage[] = [{ role: 'user', content: `${SUMMARY_PREFIX} ...` }, ...turn];
    const child = await persistTurn(store, { sessionKey: KEY, session, result: { newMessages: turn, compactedHistory: compacted }, turnId: 't2' });
    expect(child.parentSessionId).toBe(session.id);
    expect(await store.getHistory(child.id)).toEqual(compacted);
    expect((await store.currentSession(KEY))?.id).toBe(child.id);
    expect((await store.getSession(session.id))?.endReason).toBe('compression');
  });
});
