/**
 * The OpenAI-compatible API, driven by the real `openai` SDK as the client against the real gateway process, which
 * answers through its real queue, worker and agent loop (the OpenAI stand-in plays the model). Also: the same
 * through an ingress and a worker in separate processes, with the worker SIGKILLed mid-turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { APIError, AuthenticationError, BadRequestError, NotFoundError, RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';
import { deleteRedisPrefix, FAST_TAKEOVER_ENV, startCluster, uniquePrefix, type Cluster } from './helpers/cluster.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

const KEY = 'sk-herald-test-key-0123456789';
const OTHER_KEY = 'sk-herald-other-key-0123456789';
const ADMIN = 'admin-token-for-api-tests-0123';

interface SessionJson {
  id: string;
  key: string;
  source: string;
  user_id: string | null;
  ended_at: string | null;
  end_reason: string | null;
  input_tokens: number;
}

function llmEnv(llm: FakeLLM, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HERALD_MODEL: 'openai:gpt-4.1-mini',
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: llm.url,
    HERALD_API_KEYS: `${KEY},${OTHER_KEY}`,
    HERALD_ADMIN_TOKEN: ADMIN,
    ...extra,
  };
}

function client(gw: GatewayProcess, apiKey = KEY, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: headers });
}

async function admin<T>(gw: GatewayProcess, path: string): Promise<T> {
  const res = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(res.status, path).toBe(200);
  return (await res.json()) as T;
}

/** The messages the model was sent, as role: text lines (system prompt included). */
function conversationSent(req: RecordedRequest): string[] {
  const msgs = (req.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  return msgs.map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
}

function requestFor(llm: FakeLLM, text: string): RecordedRequest {
  const found = llm.requests.filter((r) => lastUserText(r) === text);
  expect(found, `LLM requests for "${text}"`).toHaveLength(1);
  return found[0];
}

describe('OpenAI-compatible API on one process', () => {
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    gw = await startGateway({ env: llmEnv(llm, { HERALD_TOOLSETS: 'full' }) });
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
  });

  it("lists the herald model, and refuses a missing or wrong key with 401 in OpenAI's shape", async () => {
    const models = await client(gw).models.list();
    expect(models.data.map((m) => m.id)).toEqual(['herald']);

    const wrong = await client(gw, 'sk-not-a-key-at-all-000000')
      .models.list()
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(AuthenticationError);
    expect((wrong as AuthenticationError).status).toBe(401);
    expect((wrong as AuthenticationError).code).toBe('invalid_api_key');

    const missing = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({
      error: { message: expect.stringContaining('API key'), type: 'invalid_request_error', param: null, code: null },
    });
  });

  it('refuses bad request bodies with 400 naming the parameter, and loses nothing', async () => {
    const noMessages = await client(gw)
      .chat.completions.create({ model: 'herald' } as never)
      .catch((e: unknown) => e);
    expect(noMessages).toBeInstanceOf(BadRequestError);
    expect((noMessages as BadRequestError).param).toBe('messages');
    expect((noMessages as BadRequestError).message).toContain("'messages' is required");

    const badRole = await client(gw)
      .chat.completions.create({ model: 'herald', messages: [{ role: 'wizard', content: 'hi' }] } as never)
      .catch((e: unknown) => e);
    expect((badRole as BadRequestError).param).toBe('messages[0].role');

    const lastNotUser = await client(gw)
      .chat.completions.create({
        model: 'herald',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      })
      .catch((e: unknown) => e);
    expect((lastNotUser as BadRequestError).status).toBe(400);
    expect((lastNotUser as BadRequestError).message).toContain('last message must be a user message');

    const unknownModel = await client(gw)
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(unknownModel).toBeInstanceOf(NotFoundError);
    expect((unknownModel as NotFoundError).code).toBe('model_not_found');

    const notJson = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"model": "herald", "messages": [',
    });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');

    const previous = await client(gw)
      .responses.create({ model: 'herald', input: 'hi', previous_response_id: 'resp_1' })
      .catch((e: unknown) => e);
    expect((previous as BadRequestError).param).toBe('previous_response_id');

    // None of them reached the model; the next good request is answered.
    const ok = await client(gw).chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'after the bad ones' }] });
    expect(ok.choices[0].message.content).toBe('ok: after the bad ones');
    expect(llm.requests.map(lastUserText).filter((t) => t === 'hi')).toEqual([]);
  });

  it("stateless: the client sends the history; its system message is added to Herald's; the session is stored with source api and ended", async () => {
    const { data: res, response } = await client(gw)
      .chat.completions.create({
        model: 'herald',
        messages: [
          { role: 'system', content: 'Answer like a pirate.' },
          { role: 'user', content: 'my name is Ada' },
          { role: 'assistant', content: 'Ahoy Ada' },
          { role: 'user', content: 'what is my name? (stateless)' },
        ],
      })
      .withResponse();
    expect(response.headers.get('x-herald-session')).toBeNull();
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('herald');
    expect(res.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok: what is my name? (stateless)' } });
    expect(res.usage!.total_tokens).toBeGreaterThan(0);
    expect(res.usage!.total_tokens).toBe(res.usage!.prompt_tokens + res.usage!.completion_tokens);

    const request = requestFor(llm, 'what is my name? (stateless)');
    // Herald's own tools, but not clarify: a client waiting on one HTTP request cannot be asked a question.
    const tools = ((request.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
    expect(tools).toContain('current_time');
    expect(tools).not.toContain('clarify');
    const sent = conversationSent(request);
    expect(sent[0]).toMatch(/^system: You are Herald[\s\S]*Answer like a pirate\.$/);
    expect(sent.slice(1)).toEqual(['user: my name is Ada', 'assistant: Ahoy Ada', 'user: what is my name? (stateless)']);

    // Ended once answered (just after the answer went out).
    const id = response.headers.get('x-herald-session-id')!;
    await waitFor(async () => (await admin<{ session: SessionJson }>(gw, `/admin/sessions/${id}`)).session.end_reason === 'api_stateless', {
      what: 'the stateless session, ended',
    });
    const shown = await admin<{ session: SessionJson; messages: Array<{ role: string; content: string }> }>(gw, `/admin/sessions/${id}`);
    expect(shown.session.source).toBe('api');
    expect(shown.session.user_id).toMatch(/^key-[0-9a-f]{10}$/);
    expect(shown.messages.map((m) => `${m.role}: ${m.content}`)).toEqual([
      'user: my name is Ada',
      'assistant: Ahoy Ada',
      'user: what is my name? (stateless)',
      'assistant: ok: what is my name? (stateless)',
    ]);
  });

  it('sessions: X-Herald-Session (or user) continues a stored conversation; the client sends only its new message', async () => {
    const named = client(gw, KEY, { 'X-Herald-Session': 'notes-42' });
    const first = await named.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'remember: kiwi' }] }).withResponse();
    expect(first.response.headers.get('x-herald-session')).toBe('notes-42');
    const sessionId = first.response.headers.get('x-herald-session-id');
    await named.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'which fruit?' }] });
    expect(conversationSent(requestFor(llm, 'which fruit?')).slice(1)).toEqual(['user: remember: kiwi', 'assistant: ok: remember: kiwi', 'user: which fruit?']);

    // `user` names a session too; another key's session of the same name is another conversation.
    await client(gw).chat.completions.create({ model: 'herald', user: 'alice', messages: [{ role: 'user', content: 'alice one' }] });
    await client(gw, OTHER_KEY).chat.completions.create({ model: 'herald', user: 'alice', messages: [{ role: 'user', content: 'alice elsewhere' }] });
    await client(gw).chat.completions.create({ model: 'herald', user: 'alice', messages: [{ role: 'user', content: 'alice two' }] });
    expect(conversationSent(requestFor(llm, 'alice two')).slice(1)).toEqual(['user: alice one', 'assistant: ok: alice one', 'user: alice two']);
    expect(conversationSent(requestFor(llm, 'alice elsewhere')).slice(1)).toEqual(['user: alice elsewhere']);

    const session = await admin<{ session: SessionJson }>(gw, `/admin/sessions/${sessionId}`);
    expect(session.session).toMatchObject({ source: 'api', ended_at: null });
    expect(session.session.key).toMatch(/^agent:main:api:dm:key-[0-9a-f]{10}:notes-42$/);
  });

  it('streams Chat Completions over SSE: deltas add up to the reply, with a usage chunk when asked', async () => {
    llm.script({ text: 'one two three four five six' });
    const stream = await client(gw).chat.completions.create({
      model: 'herald',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'count please' }],
    });
    const deltas: string[] = [];
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      for (const c of chunk.choices) {
        if (c.delta.content) deltas.push(c.delta.content);
        if (c.finish_reason) finish = c.finish_reason;
      }
    }
    expect(deltas.join('')).toBe('one two three four five six');
    expect(deltas.length).toBeGreaterThan(1);
    expect(finish).toBe('stop');
    expect(usage!.completion_tokens).toBeGreaterThan(0);
  });

  it('a turn with tools: the JSON answer is the reply; the stream shows each model response, the tool run between them', async () => {
    llm.script({ text: 'Let me look.', toolCalls: [{ name: 'current_time', arguments: '{}' }] }, { text: 'It is now.' });
    const plain = await client(gw).chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'time? (json)' }] });
    expect(plain.choices[0].message.content).toBe('It is now.');

    llm.script({ text: 'Let me look.', toolCalls: [{ name: 'current_time', arguments: '{}' }] }, { text: 'It is now.' });
    const stream = client(gw).chat.completions.stream({ model: 'herald', messages: [{ role: 'user', content: 'time? (stream)' }] });
    const done = await stream.finalChatCompletion();
    expect(done.choices[0].message.content).toBe('Let me look.\n\nIt is now.');
    // The tool really ran inside Herald: its result went back to the model.
    const second = llm.requests.filter((r) => lastUserText(r) === 'time? (stream)').at(-1)!;
    expect(conversationSent(second).some((l) => l.startsWith('tool: '))).toBe(true);
  });

  it('the Responses API, JSON and streamed, with the real event types', async () => {
    const res = await client(gw).responses.create({ model: 'herald', input: 'hello responses', instructions: 'Be brief.' });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.output_text).toBe('ok: hello responses');
    expect(res.usage!.total_tokens).toBeGreaterThan(0);
    expect(conversationSent(requestFor(llm, 'hello responses'))[0]).toMatch(/Be brief\.$/);

    llm.script({ text: 'streamed answer here' });
    const types: string[] = [];
    const stream = client(gw).responses.stream({ model: 'herald', input: [{ role: 'user', content: 'stream it' }] });
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('streamed answer here');
    expect(final.status).toBe('completed');
    const distinct = types.filter((t, i) => t !== types[i - 1]);
    expect(distinct).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('the model provider failing comes back as an OpenAI error, not as a 200', async () => {
    llm.script({ error: { status: 401 } });
    const err = await client(gw)
      .chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'upstream refuses' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(502);
    expect((err as APIError).message).toContain('refused our credentials');
  });

  it('a client that disconnects takes its question back: its turn stops (the model request is cancelled) and no later model request carries it', async () => {
    llm.script({ text: 'too late', delayMs: 60_000 });
    const controller = new AbortController();
    const named = client(gw, KEY, { 'X-Herald-Session': 'leaver' });
    const pending = named.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'slow question' }] }, { signal: controller.signal });
    const req = await waitFor(() => llm.requests.find((r) => lastUserText(r) === 'slow question'), { what: 'the LLM request' });
    controller.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(() => req.aborted, { what: 'the LLM request aborted' });
    await gw.waitForLog((l) => l.msg === 'API client disconnected; withdrawing its message', 'the withdrawal');
    const next = await named.chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'still there?' }] });
    // The withdrawn question is gone: the next question is asked alone, not merged with it.
    expect(next.choices[0].message.content).toBe('ok: still there?');
    const sent = conversationSent(requestFor(llm, 'still there?')).join('\n');
    expect(sent).not.toContain('slow question');
    expect(sent).not.toContain('too late');
  });
});

describe('OpenAI-compatible API: a streaming client that goes away', () => {
  let llm: FakeLLM;
  let gw: GatewayProcess;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    // The worker's "turn ended" line (debug) tells when the stopped turn has really finished.
    gw = await startGateway({ env: llmEnv(llm, { HERALD_LOG_LEVEL: 'debug' }) });
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
  });

  it('stops the turn mid-stream (the model request is cancelled); nothing of it is kept in the session', async () => {
    llm.script({ text: 'first words and then a very long pause before the rest', chunkDelayMs: 60_000 });
    const stream = await client(gw, KEY, { 'X-Herald-Session': 'stream-leaver' }).chat.completions.create({
      model: 'herald',
      stream: true,
      messages: [{ role: 'user', content: 'stream then leave' }],
    });
    const req = llm.requests.find((r) => lastUserText(r) === 'stream then leave')!;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break; // the first words arrived: leave (the SDK aborts the request)
    }
    await waitFor(() => req.aborted, { what: 'the LLM request aborted' });
    await gw.waitForLog((l) => l.msg === 'API client disconnected; withdrawing its message', 'the withdrawal');
    await gw.waitForLog((l) => l.msg === 'turn ended' && l.abort === 'stop', 'the stopped turn to end');
    const list = await admin<{ sessions: SessionJson[] }>(gw, '/admin/sessions?source=api');
    const id = list.sessions.find((s) => s.key.endsWith(':stream-leaver'))?.id;
    expect(id).toBeDefined();
    const shown = await admin<{ messages: Array<{ role: string; content: string }> }>(gw, `/admin/sessions/${id}`);
    // The question was taken back: neither it nor the words streamed before the client left are in the history.
    expect(shown.messages).toEqual([]);
  });
});

describe('OpenAI-compatible API: the server stopping under a waiting request', () => {
  it('answers 503 with Retry-After and takes the message back (the next process skips it), then exits cleanly', async () => {
    const llm = await startFakeOpenAI();
    const prefix = uniquePrefix('api-stop');
    const dataDir = mkdtempSync(join(tmpdir(), 'herald-api-stop-'));
    const env = llmEnv(llm, { HERALD_DRAIN_TIMEOUT_MS: '500', HERALD_REDIS_PREFIX: prefix });
    const gw = await startGateway({ env, dataDir });
    let next: GatewayProcess | null = null;
    try {
      llm.script({ text: 'never sent', delayMs: 60_000 });
      const pending = client(gw)
        .chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'answer slowly' }] })
        .catch((e: unknown) => e);
      const req = await waitFor(() => llm.requests.find((r) => lastUserText(r) === 'answer slowly'), { what: 'the LLM request' });
      gw.proc.kill('SIGTERM');
      const err = await pending;
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(503);
      expect((err as APIError).headers?.get('retry-after')).toBe('1');
      expect(await gw.exited).toBe(0);
      expect(req.aborted).toBe(true);
      // The turn was handed back to the queue at shutdown; the next process finds it withdrawn and never runs it.
      next = await startGateway({ env, dataDir });
      await next.waitForLog((l) => l.msg === 'message withdrawn by its sender before its turn ran; skipped', 'the withdrawn message skipped');
      expect(llm.requests.filter((r) => lastUserText(r) === 'answer slowly')).toHaveLength(1);
    } finally {
      await next?.stop();
      await gw.stop();
      await llm.close();
      await deleteRedisPrefix(prefix);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('OpenAI-compatible API: rate limit', () => {
  let llm: FakeLLM;
  let gw: GatewayProcess;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    gw = await startGateway({ env: llmEnv(llm, { HERALD_API_RATE_LIMIT: '2' }) });
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
  });

  it('over HERALD_API_RATE_LIMIT a key gets 429 with Retry-After; other keys are not held back', async () => {
    for (const n of [1, 2]) await client(gw).chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: `r${n}` }] });
    const over = await client(gw)
      .chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'r3' }] })
      .catch((e: unknown) => e);
    expect(over).toBeInstanceOf(RateLimitError);
    expect((over as RateLimitError).code).toBe('rate_limit_exceeded');
    expect(Number((over as RateLimitError).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await client(gw, OTHER_KEY).chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'other key' }] });
    expect(other.choices[0].message.content).toBe('ok: other key');
    expect(llm.requests.map(lastUserText)).not.toContain('r3');
  });
});

describe('OpenAI-compatible API across processes', () => {
  let llm: FakeLLM;
  let cluster: Cluster;
  const prefix = uniquePrefix('api');
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    const fast = { ...FAST_TAKEOVER_ENV, HERALD_REDIS_PREFIX: prefix };
    cluster = await startCluster({ workers: 1, env: llmEnv(llm, fast) });
  });
  afterAll(async () => {
    await cluster?.stop();
    await llm?.close();
    await deleteRedisPrefix(prefix);
  });

  it('the answer comes back to the ingress from the worker process, also after that worker was SIGKILLed mid-turn', async () => {
    const ingress = cluster.ingress;
    const quick = await client(ingress).chat.completions.create({ model: 'herald', messages: [{ role: 'user', content: 'via a worker' }] });
    expect(quick.choices[0].message.content).toBe('ok: via a worker');

    let runs = 0;
    llm.respondWith((req) => {
      if (lastUserText(req) !== 'survive the crash') return { text: `ok: ${lastUserText(req)}` };
      runs++;
      return runs === 1 ? { text: 'never delivered', delayMs: 3_600_000 } : { text: 'answered by the second worker' };
    });
    const stream = client(ingress, KEY, { 'X-Herald-Session': 'crash' }).chat.completions.stream({
      model: 'herald',
      messages: [{ role: 'user', content: 'survive the crash' }],
    });
    await waitFor(() => runs === 1, { what: 'the first run reaching the model' });
    await cluster.workers[0].stop('SIGKILL');
    await cluster.addWorker();
    const done = await stream.finalChatCompletion();
    expect(done.choices[0].message.content).toBe('answered by the second worker');
    expect(runs).toBe(2);
  });
});
