/**
 * Side tasks in the real gateway: with HERALD_AUXILIARY_MODEL on an endpoint whose account is out of credit
 * (every call a 402), the new conversation's title and /compress's memory flush and summary go to the auxiliary
 * fallback — not to the conversation model — the operator sees why in the log, and /metrics counts the refused
 * calls under the auxiliary model and the spend under the fallback that answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUMMARIZER_SYSTEM_PROMPT } from '@herald/agent-core';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText, offersOnlyMemory } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { TITLE_SYSTEM_PROMPT } from '../apps/gateway/src/features/llm/auto-title.js';

const SUMMARY = 'SUMMARY-AUX-41: the user counted.';
const TURNS = ['first', 'second', 'third', 'fourth'];
const isSummary = (r: RecordedRequest): boolean => r.rawBody.includes(SUMMARIZER_SYSTEM_PROMPT.slice(0, 40));
const isTitle = (r: RecordedRequest): boolean => r.rawBody.includes(TITLE_SYSTEM_PROMPT.slice(0, 40));

describe('side tasks on the auxiliary model', () => {
  let tg: TelegramFake;
  let main: FakeLLM;
  let cheap: FakeLLM;
  let backup: FakeLLM;
  let gw: GatewayProcess;
  const prefix = uniquePrefix('side-tasks');

  beforeAll(async () => {
    [tg, main, cheap, backup] = await Promise.all([startTelegramFake(), startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
    main.respondWith((req) => ({ text: `re: ${lastUserText(req)}` }));
    cheap.respondWith(() => ({ error: { status: 402 } }));
    backup.respondWith((req) => (isSummary(req) ? { text: SUMMARY } : isTitle(req) ? { text: '"Counting in order."' } : { text: 'nothing to save' }));
    gw = await startGateway({
      env: telegramEnv(tg, main, {
        HERALD_REDIS_PREFIX: prefix,
        HERALD_ENDPOINTS: JSON.stringify([
          { name: 'cheap', base_url: cheap.url, api_keys: ['sk-cheap-e2e-key-0001'] },
          { name: 'backup', base_url: backup.url },
        ]),
        HERALD_AUXILIARY_MODEL: 'cheap:google/gemini-2.5-flash',
        HERALD_AUXILIARY_FALLBACK_MODELS: 'backup:qwen3-8b',
      }),
    });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([tg?.close(), main?.close(), cheap?.close(), backup?.close()]);
    await deleteRedisPrefix(prefix);
  });

  it('a 402 on the auxiliary model hands the title, the flush and the summary to its fallback; the conversation model only chats', async () => {
    const chat = 611;
    // /compress keeps the first three messages and the last four: the middle needs a fifth.
    for (const text of TURNS) {
      tg.injectMessage({ chatId: chat, userId: chat, text });
      await waitFor(() => repliesIn(tg, chat).includes(`re: ${text}`), { timeoutMs: 30_000, what: `the answer to "${text}"` });
    }
    // The first exchange named the conversation (behind the reply), through the fallback.
    await waitFor(() => gw.logs().some((l) => l.msg === 'conversation titled'), { timeoutMs: 30_000, what: 'the title' });
    tg.injectMessage({ chatId: chat, userId: chat, text: '/title' });
    await waitFor(() => repliesIn(tg, chat).includes('This conversation is titled “Counting in order”.'), { timeoutMs: 30_000, what: 'the title shown' });
    expect(cheap.requests.filter(isTitle)).toHaveLength(1);
    expect(backup.requests.filter(isTitle)).toHaveLength(1);
    // The title call is counted like the turn's own (per-profile tokens), labelled with the model that answered it
    // (the fallback, not the chain's first model), before /compress asks the chain again.
    await waitFor(
      async () =>
        /herald_llm_profile_tokens_total\{profile="default",model="backup:qwen3-8b",kind="input"\} [1-9]/.test(await (await fetch(`${gw.url}/metrics`)).text()),
      { timeoutMs: 30_000, what: 'the title call in the spend metrics' },
    );

    tg.injectMessage({ chatId: chat, userId: chat, text: '/compress' });
    await waitFor(() => repliesIn(tg, chat).some((t) => t.includes('Compressed the conversation')), { timeoutMs: 30_000, what: 'the /compress notice' });

    // The conversation model answered the two messages and nothing else.
    expect(main.requests.map(lastUserText)).toEqual(TURNS);
    // The auxiliary model was asked first for both side tasks and refused (out of credit)...
    expect(cheap.requests.filter(offersOnlyMemory)).toHaveLength(1);
    expect(cheap.requests.filter(isSummary)).toHaveLength(1);
    expect(cheap.requests.every((r) => r.body.model === 'google/gemini-2.5-flash')).toBe(true);
    // ...so its fallback did them, with the same requests.
    expect(backup.requests.filter(offersOnlyMemory)).toHaveLength(1);
    const summary = backup.requests.find(isSummary)!;
    expect(summary.rawBody).toBe(cheap.requests.find(isSummary)!.rawBody.replace('google/gemini-2.5-flash', 'qwen3-8b'));
    expect(summary.rawBody).toContain('second');

    const fallbacks = gw.logs().filter((l) => l.msg === 'side task: model failed; the next model takes it');
    expect(fallbacks.map((l) => [l.from, l.to, l.status])).toEqual(Array(3).fill(['cheap:google/gemini-2.5-flash', 'backup:qwen3-8b', 402]));
    expect(JSON.stringify(gw.logs())).not.toContain('sk-cheap-e2e-key-0001');

    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).toMatch(/herald_llm_requests_total\{provider="cheap",model="google\/gemini-2.5-flash",status="auth"\} 3/);
    expect(metrics).toMatch(/herald_llm_requests_total\{provider="backup",model="qwen3-8b",status="ok"\} 3/);
    // Spend is labelled with the model that answered: nothing under the refusing first model.
    expect(metrics).not.toMatch(/herald_llm_profile_tokens_total\{profile="default",model="cheap:google\/gemini-2.5-flash"/);
  });
});
