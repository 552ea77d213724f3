/**
 * The stand-ins' wire formats, read as raw bytes with fetch: other suites trust these fakes to behave like the
 * real APIs, so the framing, error bodies and request rules are pinned here.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM } from './index.js';

const fakes: FakeLLM[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});
async function openai(opts?: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeLLM> {
  const f = await startFakeOpenAI(opts);
  fakes.push(f);
  return f;
}
async function anthropic(opts?: Parameters<typeof startFakeAnthropic>[0]): Promise<FakeLLM> {
  const f = await startFakeAnthropic(opts);
  fakes.push(f);
  return f;
}

const post = (url: string, body: unknown, headers: Record<string, string>): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
const openaiHeaders = { authorization: 'Bearer sk-test' };
const anthropicHeaders = { 'x-api-key': 'sk-ant', 'anthropic-version': '2023-06-01' };

describe('OpenAI stand-in', () => {
  it('frames a stream as data-only SSE ending in [DONE], with a usage chunk when asked', async () => {
    const f = await openai();
    f.script({ text: 'Hi there', usage: { input: 10, output: 2, cacheRead: 4 } });
    const res = await post(
      `${f.url}/chat/completions`,
      { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] },
      openaiHeaders,
    );
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const raw = await res.text();
    const frames = raw.split('\n\n').filter((s) => s !== '');
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(frames.every((fr) => fr.startsWith('data: ') && !fr.includes('\n'))).toBe(true);
    const chunks = frames
      .slice(0, -1)
      .map((fr) => JSON.parse(fr.slice(6)) as { choices: { delta: { content?: string }; finish_reason: string | null }[]; usage: unknown });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hi there');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 14, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } } });
  });

  it('answers a non-streaming request with a chat.completion body (echo by default)', async () => {
    const f = await openai();
    const res = await post(
      `${f.url}/chat/completions`,
      { model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'ping' }] }] },
      openaiHeaders,
    );
    expect(await res.json()).toMatchObject({
      object: 'chat.completion',
      choices: [{ message: { role: 'assistant', content: 'ok: ping' }, finish_reason: 'stop' }],
    });
  });

  it('returns OpenAI error bodies: missing key, unanswered tool call, unknown route', async () => {
    const f = await openai();
    const noKey = await post(`${f.url}/chat/completions`, { model: 'm', messages: [] }, {});
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toMatchObject({ error: { type: 'invalid_request_error', param: null, code: null } });

    const unanswered = await post(
      `${f.url}/chat/completions`,
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'user', content: 'b' },
        ],
      },
      openaiHeaders,
    );
    expect(unanswered.status).toBe(400);
    const body = (await unanswered.json()) as { error: { message: string; param: string } };
    expect(body.error.message).toContain('call_9');
    expect(body.error.param).toBe('messages.[1].role');

    const notFound = await post(`${f.url}/embeddings`, {}, openaiHeaders);
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toEqual({ error: { message: 'Invalid URL (POST /v1/embeddings)', type: 'invalid_request_error', param: null, code: null } });
    expect(f.requests.map((r) => r.path)).toEqual(['/v1/chat/completions', '/v1/chat/completions', '/v1/embeddings']);
  });

  it('sends retry-after with a scripted 429 and consumes the script in order, then asks respondWith', async () => {
    const f = await openai();
    f.script({ error: { status: 429, retryAfter: 3 } }, { text: 'second' });
    f.respondWith((req) => ({ text: `third saw ${String(req.body.model)}` }));
    const ask = () => post(`${f.url}/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'q' }] }, openaiHeaders);
    const first = await ask();
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('3');
    expect(await first.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    expect(await (await ask()).json()).toMatchObject({ choices: [{ message: { content: 'second' } }] });
    expect(await (await ask()).json()).toMatchObject({ choices: [{ message: { content: 'third saw m' } }] });
  });
});

describe('Anthropic stand-in', () => {
  it('streams named events in the real order', async () => {
    const f = await anthropic();
    f.script({ reasoning: 'hmm', text: 'Hi', toolCalls: [{ id: 'toolu_1', name: 'f', arguments: '{"a":1}' }] });
    const res = await post(
      `${f.url}/v1/messages`,
      { model: 'claude-haiku-4-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'x' }] },
      anthropicHeaders,
    );
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const frames = (await res.text()).split('\n\n').filter((s) => s !== '');
    const events = frames.map((fr) => {
      const [eventLine, dataLine] = fr.split('\n');
      const name = eventLine!.replace(/^event: /, '');
      const data = JSON.parse(dataLine!.replace(/^data: /, '')) as { type: string; delta?: { type: string; stop_reason?: string } };
      expect(data.type).toBe(name);
      return { name, data };
    });
    const names = events.map((e) => e.name).filter((n, i, all) => n !== 'content_block_delta' || all[i - 1] !== 'content_block_delta');
    expect(names).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop', // thinking (+ signature)
      'content_block_start',
      'content_block_delta',
      'content_block_stop', // text
      'content_block_start',
      'content_block_delta',
      'content_block_stop', // tool_use
      'message_delta',
      'message_stop',
    ]);
    expect(events.find((e) => e.name === 'message_delta')!.data.delta!.stop_reason).toBe('tool_use');
    expect(events.some((e) => e.data.delta?.type === 'signature_delta')).toBe(true);
  });

  it('accepts x-api-key or Bearer, checks the key and requires anthropic-version', async () => {
    const f = await anthropic({ apiKey: 'sk-ant' });
    const body = { model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'ping' }] };
    expect((await post(`${f.url}/v1/messages`, body, anthropicHeaders)).status).toBe(200);
    const bearer = await post(`${f.url}/v1/messages`, body, { authorization: 'Bearer sk-ant', 'anthropic-version': '2023-06-01' });
    expect(await bearer.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'ok: ping' }], stop_reason: 'end_turn' });
    const wrong = await post(`${f.url}/v1/messages`, body, { 'x-api-key': 'nope', 'anthropic-version': '2023-06-01' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    const noVersion = await post(`${f.url}/v1/messages`, body, { 'x-api-key': 'sk-ant' });
    expect(noVersion.status).toBe(400);
  });

  it('rejects what the API rejects: repeated roles, tool_use without a following tool_result', async () => {
    const f = await anthropic();
    const repeated = await post(
      `${f.url}/v1/messages`,
      {
        model: 'm',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: 'b' },
        ],
      },
      anthropicHeaders,
    );
    expect(repeated.status).toBe(400);
    expect(await repeated.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const orphan = await post(
      `${f.url}/v1/messages`,
      {
        model: 'm',
        max_tokens: 10,
        messages: [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_7', name: 'f', input: {} }] },
          { role: 'user', content: 'b' },
        ],
        tools: [{ name: 'f', description: 'f', input_schema: { type: 'object', properties: {} } }],
      },
      anthropicHeaders,
    );
    expect(orphan.status).toBe(400);
    expect(((await orphan.json()) as { error: { message: string } }).error.message).toContain('toolu_7');
  });

  it('sends 529 overloaded bodies and records a client that hangs up while waiting', async () => {
    const f = await anthropic();
    f.script({ error: { status: 529 } }, { text: 'slow', delayMs: 5_000 });
    const body = { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'a' }] };
    const overloaded = await post(`${f.url}/v1/messages`, body, anthropicHeaders);
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });

    const controller = new AbortController();
    const pending = fetch(`${f.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...anthropicHeaders },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(f.activeRequests()).toBe(1));
    controller.abort();
    await pending;
    await vi.waitFor(() => expect(f.requests[1]!.aborted).toBe(true));
    expect(f.activeRequests()).toBe(0);
    expect(f.requests[0]!.aborted).toBe(false);
  });
});

describe('tool schemas (the rules an unrepaired MCP schema breaks)', () => {
  const user = [{ role: 'user', content: 'x' }];
  it('OpenAI refuses parameters that are not an object schema, and arrays without items, naming the place', async () => {
    const f = await openai();
    const call = (parameters: unknown) =>
      post(`${f.url}/chat/completions`, { model: 'm', messages: user, tools: [{ type: 'function', function: { name: 'look', parameters } }] }, openaiHeaders);
    const noItems = await call({ type: 'object', properties: { tags: { type: 'array' } } });
    expect(noItems.status).toBe(400);
    expect(await noItems.json()).toMatchObject({
      error: {
        message: "Invalid schema for function 'look': In context=('properties', 'tags'), array schema missing items.",
        param: 'tools[0].function.parameters',
        code: 'invalid_function_parameters',
      },
    });
    expect((await call({ anyOf: [{ type: 'object' }] })).status).toBe(400);
    expect((await call({ type: 'object' })).status).toBe(400);
    expect((await call({ type: 'object', properties: { tags: { type: 'array', items: {} } } })).status).toBe(200);
  });

  it('Anthropic refuses oneOf / anyOf / allOf at the top of input_schema', async () => {
    const f = await anthropic();
    const call = (input_schema: unknown) =>
      post(`${f.url}/v1/messages`, { model: 'm', max_tokens: 10, messages: user, tools: [{ name: 'look', input_schema }] }, anthropicHeaders);
    const combinator = await call({ type: 'object', properties: {}, anyOf: [{ required: ['a'] }] });
    expect(combinator.status).toBe(400);
    expect(await combinator.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: 'tools.0.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level' },
    });
    expect((await call({ type: 'object', properties: {} })).status).toBe(200);
  });
});
