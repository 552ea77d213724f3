/**
 * The plan stage's choices that only it makes: the turn's id as the loop's task id (B1/E9: tools keep per-task
 * state under it, and a re-run of the turn keeps it), the ephemeral system prompt (N2), and the saved notes as the
 * requests' context instead of the stored user message (B7).
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, Provider, Session } from '@herald/agent-core';
import { loadConfig } from '../../support/config/load.js';
import { outboundLimits } from '../../out/limits.js';
import { planLoop } from './plan.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';
import type { PreparedTurn } from './prepare.js';

const provider: Provider = { name: 'openai', model: 'gpt-4.1-mini', apiMode: 'chat_completions', complete: () => Promise.reject(new Error('not called')) };
const session = { id: 's-1', key: 'k', source: 'telegram', userId: null, systemPrompt: 'You are Herald.', model: null, profile: null } as unknown as Session;

async function plan(env: Record<string, string>, history: ChatMessage[], notes: string | null, chat = { sessionKey: 'k', sessionId: 's-1' }) {
  const config = loadConfig({ env, file: null });
  const deps = {
    conversation: { config, windows: undefined, profiles: { get: () => ({ toolsets: [] }) }, sideTasks: { forSession: () => null } },
    outbound: { limits: outboundLimits(config) },
    store: {},
  } as unknown as TurnDeps;
  const payload = { text: 'hello', userId: '7', platform: 'telegram', platformMessageId: 'm1' };
  const toolPlan = { userMessage: 'hello', requestContext: notes, tools: [], budget: undefined, getSteerMessages: () => [], toolContext: {} };
  const open = {
    ctx: { entries: [{ id: 'turn-7', payload }], turnId: 'turn-7', signal: new AbortController().signal, log: pino({ level: 'silent' }), fence: 1 },
    first: payload,
    last: payload,
    sessionKey: chat.sessionKey,
    tools: { forTurn: () => ({ plan: async () => toolPlan }) },
  } as unknown as OpenTurn;
  const prepared = {
    agent: { systemPrompt: 'default', maxIterations: 5, fallbackState: undefined },
    session: { ...session, id: chat.sessionId, key: chat.sessionKey },
    providers: { primary: provider, fallbacks: [] },
    summarizer: null,
    searchSummarizer: null,
    meter: { provider: (p: Provider) => p },
    history,
    media: { blocks: [], attachments: [], images: [] },
    saved: [],
  } as unknown as PreparedTurn;
  return (await planLoop(deps, open, prepared)).options;
}

describe('the loop plan', () => {
  it("runs the loop with the turn's id as its task id", async () => {
    expect((await plan({}, [], null)).taskId).toBe('turn-7');
  });

  it('passes HERALD_EPHEMERAL_SYSTEM_PROMPT apart from the stored system prompt', async () => {
    const options = await plan({ HERALD_EPHEMERAL_SYSTEM_PROMPT: 'Reply in French.' }, [], null);
    expect(options).toMatchObject({ systemPrompt: 'You are Herald.', ephemeralSystemPrompt: 'Reply in French.' });
    expect((await plan({}, [], null)).ephemeralSystemPrompt).toBeUndefined();
  });

  it("names the chat, not the session, as the prompt-cache key (hashed): a compression's next session reads the cache the last call wrote", async () => {
    const key = (sessionKey: string, sessionId: string) => plan({}, [], null, { sessionKey, sessionId }).then((o) => o.cacheKey);
    const first = await key('telegram:dm:4242', 's-1');
    expect(first).toMatch(/^herald-[0-9a-f]{32}$/);
    expect(await key('telegram:dm:4242', 's-2')).toBe(first);
    expect(await key('telegram:dm:4243', 's-1')).not.toBe(first);
  });

  it('sends the notes as request context, and drops the block an older session stored in its history', async () => {
    const old: ChatMessage[] = [
      { role: 'user', content: '<memory>\nNotes saved from earlier conversations (edit them with the memory tool):\nold\n</memory>\n\nhi' },
      { role: 'assistant', content: 'hello' },
    ];
    const options = await plan({}, old, '<memory>\nnew\n</memory>');
    expect(options.requestContext).toBe('<memory>\nnew\n</memory>');
    expect(options.userMessage).toBe('hello');
    expect(options.history.map((m) => m.content)).toEqual(['hi', 'hello']);
  });
});
