/**
 * The prompt-cache model the stand-ins use (prompt-cache.ts): the providers' documented rules, pinned, and the usage
 * a client reads back from a stand-in that models them (the OpenAI SDK; Anthropic's wire read raw, as the other
 * stand-in tests do: the Anthropic SDK belongs to agent-core, whose own suites drive it against this stand-in).
 */
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM } from './index.js';
import { PromptCache, TooManyBreakpointsError, anthropicView, chatCompletionsView } from './prompt-cache.js';

const fakes: FakeLLM[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

/** A text of about `tokens` tokens (4 characters each), distinct per seed. */
const text = (tokens: number, seed = 'a'): string => `${seed}:`.padEnd(tokens * 4, seed);

describe('Anthropic rules', () => {
  const view = (blocks: string[], breakpoints: number[]) => ({ model: 'claude', blocks, breakpoints });

  it('writes a prefix at a breakpoint once it holds the minimum, and reads it back byte-identical', () => {
    const cache = new PromptCache();
    expect(cache.anthropic(view([text(500)], [0]))).toEqual({ total: 500, cacheRead: 0, cacheWrite: 0, uncached: 500 });
    const first = cache.anthropic(view([text(1_500), 'user:hi'], [0]));
    expect(first.cacheWrite).toBe(1_500);
    const second = cache.anthropic(view([text(1_500), 'user:hello again'], [0]));
    expect(second).toMatchObject({ cacheRead: 1_500, cacheWrite: 0 });
    // One byte changed in the prefix: nothing read.
    expect(cache.anthropic(view([`${text(1_500)}!`, 'user:hi'], [0])).cacheRead).toBe(0);
  });

  it('finds an earlier breakpoint within 20 blocks before a new one, not further', () => {
    const cache = new PromptCache();
    const blocks = [text(1_200), ...Array.from({ length: 30 }, (_, i) => `m${i}`)];
    cache.anthropic(view(blocks.slice(0, 2), [1]));
    expect(cache.anthropic(view(blocks.slice(0, 21), [20])).cacheRead).toBeGreaterThan(1_200);
    const far = new PromptCache();
    far.anthropic(view(blocks.slice(0, 2), [1]));
    expect(far.anthropic(view(blocks.slice(0, 25), [24])).cacheRead).toBe(0);
  });

  it('forgets an entry 5 minutes after its last hit, and a hit refreshes it', () => {
    let now = 0;
    const cache = new PromptCache({ now: () => now });
    const v = view([text(1_100)], [0]);
    cache.anthropic(v);
    now = 4 * 60_000;
    expect(cache.anthropic(v).cacheRead).toBe(1_100);
    now = 8 * 60_000;
    expect(cache.anthropic(v).cacheRead).toBe(1_100);
    now = 14 * 60_000;
    expect(cache.anthropic(v).cacheRead).toBe(0);
  });

  it('refuses a fifth breakpoint', () => {
    expect(() => new PromptCache().anthropic(view(['a', 'b', 'c', 'd', 'e'], [0, 1, 2, 3, 4]))).toThrow(TooManyBreakpointsError);
  });

  it('reads a request as tools, system, then messages, markers left out of the cached bytes', () => {
    const v = anthropicView({
      model: 'm',
      tools: [{ name: 't', cache_control: { type: 'ephemeral' } }],
      system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
    });
    expect(v.blocks).toEqual(['{"name":"t"}', '{"type":"text","text":"sys"}', 'user:{"type":"text","text":"hi"}']);
    expect(v.breakpoints).toEqual([0, 1, 2]);
  });
});

describe('OpenAI rules', () => {
  const view = (messages: string[]) => chatCompletionsView({ model: 'gpt', messages: messages.map((content) => ({ role: 'user', content })) });

  it('caches nothing under 1,024 tokens, then the longest earlier prefix in 128-token steps', () => {
    const cache = new PromptCache();
    expect(cache.openai(view([text(900)])).cacheRead).toBe(0);
    expect(cache.openai(view([text(900)])).cacheRead).toBe(0);
    cache.openai(view([text(2_000)]));
    const next = cache.openai(view([text(2_000), text(500, 'b')]));
    expect(next.cacheRead % 128).toBe(0);
    expect(next.cacheRead).toBeGreaterThan(1_800);
    expect(next.cacheRead).toBeLessThanOrEqual(2_000);
    expect(next.cacheWrite).toBe(0);
  });

  it('reads nothing when the start of the prompt changed', () => {
    const cache = new PromptCache();
    cache.openai(view([text(3_000)]));
    expect(cache.openai(view([text(3_000, 'c')])).cacheRead).toBe(0);
  });
});

describe('stand-ins that model the cache, read by the real SDKs', () => {
  it('Anthropic reports cache writes, then reads, and refuses a fifth breakpoint with a 400', async () => {
    const f = await startFakeAnthropic({ promptCache: true });
    fakes.push(f);
    const create = async (body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> => {
      const res = await fetch(`${f.url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 50, ...body }),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const usageOf = async (q: string): Promise<Record<string, number>> => {
      const system = [{ type: 'text', text: text(2_000, 's'), cache_control: { type: 'ephemeral' } }];
      const { json } = await create({ system, messages: [{ role: 'user', content: q }] });
      return json.usage as Record<string, number>;
    };
    const first = await usageOf('one');
    // The system block as sent ({"type":"text","text":…}) is a few tokens over the text itself.
    const written = first.cache_creation_input_tokens;
    expect(written).toBeGreaterThanOrEqual(2_000);
    expect(written).toBeLessThan(2_020);
    expect(first.cache_read_input_tokens).toBe(0);
    const second = await usageOf('two');
    expect(second.cache_read_input_tokens).toBe(written);
    expect(second.input_tokens).toBeGreaterThan(0);
    expect(f.requests[1].cache).toMatchObject({ cacheRead: written });
    const five = Array.from({ length: 5 }, (_, i) => ({ type: 'text', text: `s${i}`, cache_control: { type: 'ephemeral' } }));
    const refused = await create({ system: five, messages: [{ role: 'user', content: 'x' }] });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/maximum of 4 blocks with cache_control/) },
    });
  });

  it('OpenAI reports cached_tokens on Chat Completions and on Responses', async () => {
    const f = await startFakeOpenAI({ promptCache: true });
    fakes.push(f);
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: f.url, maxRetries: 0 });
    const system = text(3_000, 's');
    const chat = (q: string) =>
      client.chat.completions.create({
        model: 'gpt-4.1-mini',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: q },
        ],
      });
    expect((await chat('one')).usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    expect((await chat('two')).usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThanOrEqual(2_944);
    const respond = (q: string) => client.responses.create({ model: 'gpt-5-mini', instructions: system, input: q });
    expect((await respond('one')).usage?.input_tokens_details.cached_tokens).toBe(0);
    expect((await respond('two')).usage?.input_tokens_details.cached_tokens).toBeGreaterThanOrEqual(2_944);
  });

  it('OpenAI routes by prompt_cache_key: the same key reads the prefix, another key does not', async () => {
    const f = await startFakeOpenAI({ promptCache: true });
    fakes.push(f);
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: f.url, maxRetries: 0 });
    const system = text(3_000, 'k');
    const chat = async (q: string, key: string): Promise<number | undefined> => {
      const messages = [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: q },
      ];
      return (await client.chat.completions.create({ model: 'gpt-4.1-mini', messages, prompt_cache_key: key })).usage?.prompt_tokens_details?.cached_tokens;
    };
    expect(await chat('one', 'chat-1')).toBe(0);
    expect(await chat('two', 'chat-1')).toBeGreaterThanOrEqual(2_944);
    expect(await chat('three', 'chat-2')).toBe(0);
    const respond = async (q: string, key: string): Promise<number | undefined> =>
      (await client.responses.create({ model: 'gpt-5-mini', instructions: system, input: q, prompt_cache_key: key })).usage?.input_tokens_details.cached_tokens;
    expect(await respond('one', 'chat-1')).toBe(0);
    expect(await respond('two', 'chat-2')).toBe(0);
    expect(await respond('three', 'chat-1')).toBeGreaterThanOrEqual(2_944);
  });
});
