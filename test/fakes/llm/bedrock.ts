/**
 * Stand-in for Amazon Bedrock Runtime's ConverseStream (POST /model/{modelId}/converse-stream), reached by the
 * real @aws-sdk/client-bedrock-runtime through its `endpoint` override. The stream is the real
 * `application/vnd.amazon.eventstream` binary framing (prelude, headers, CRCs, encoded by @smithy's codec) with
 * events messageStart, contentBlockStart / Delta / Stop, messageStop and metadata (usage with cache tokens);
 * errors are Bedrock's: an HTTP status, `x-amzn-errortype` and a `{"message"}` body (ThrottlingException 429,
 * ValidationException 400, ...), or an exception frame inside the stream. Requests must be SigV4-signed.
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorKindOf, finishOf, flattenHeaders, isRecord, parseObject, randomId, readBody, splitDeltas, splitFragments, usageOf } from './server.js';
import type { FakeLLM, FakeOptions, RecordedRequest, Responder, Step, StepError } from './types.js';

const HOST = '127.0.0.1';
const PATH = /^\/model\/([^/]+)\/converse-stream$/;
const STOP_REASONS = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' } as const;
const MAX_CACHE_POINTS = 4;

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => new Uint8Array(Buffer.from(text, 'utf8')),
);

/** Bedrock's error for each stand-in error kind: exception name and message. */
const ERRORS: Record<ReturnType<typeof errorKindOf>, [string, string]> = {
  rate_limit: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  overloaded: ['ServiceUnavailableException', 'Bedrock is unable to process your request.'],
  server: ['InternalServerException', 'The system encountered an unexpected error during processing. Try your request again.'],
  auth: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  not_found: ['ResourceNotFoundException', 'Could not resolve the foundation model from the provided model identifier.'],
  payment_required: ['AccessDeniedException', 'Model access is denied due to an invalid payment instrument.'],
  too_large: ['ValidationException', 'Input is too long for requested model.'],
  context_length: ['ValidationException', 'Input is too long for requested model.'],
};

export interface FakeBedrockOptions extends FakeOptions {
  /** The access key id requests must be signed with (`apiKey` is unused: Bedrock signs, it takes no key). */
  accessKeyId?: string;
}

export async function startFakeBedrock(opts: FakeBedrockOptions = {}): Promise<FakeLLM> {
  const requests: RecordedRequest[] = [];
  const queue: Step[] = [];
  let responder: Responder | undefined;
  let active = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(`fake Bedrock failed: ${err instanceof Error ? err.message : String(err)}`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: decodeURIComponent(new URL(req.url ?? '/', `http://${HOST}`).pathname),
      headers: flattenHeaders(req.headers),
      body: {},
      rawBody: '',
      aborted: false,
      remotePort: req.socket.remotePort,
      startedAt: Date.now(),
    };
    requests.push(rec);
    active += 1;
    let closed = false;
    const closedPromise = new Promise<void>((resolve) => {
      res.on('close', () => {
        closed = true;
        if (!res.writableFinished) rec.aborted = true;
        rec.endedAt = Date.now();
        active -= 1;
        resolve();
      });
    });
    const wait = async (ms: number): Promise<void> => {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((r) => (timer = setTimeout(r, ms))), closedPromise]);
      clearTimeout(timer);
    };
    rec.rawBody = await readBody(req);
    rec.body = parseObject(rec.rawBody);

    const route = PATH.exec(rec.path);
    if (rec.method !== 'POST' || !route) return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
    const auth = rec.headers.authorization ?? '';
    const keyId = /^AWS4-HMAC-SHA256 Credential=([^/]+)\//.exec(auth)?.[1];
    if (!keyId) return sendError(res, 403, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
    if (opts.accessKeyId !== undefined && keyId !== opts.accessKeyId) {
      return sendError(res, 403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
    }
    const invalid = validate(rec.body);
    if (invalid) return sendError(res, 400, 'ValidationException', invalid);

    const step = queue.shift() ?? (responder ? await responder(rec) : { text: `ok: ${lastUserText(rec.body)}` });
    if (step.delayMs) await wait(step.delayMs);
    if (closed) return;
    if (step.error) return sendStepError(res, step.error);

    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': randomUUID() });
    let deltas = 0;
    let sent = 0;
    for (const ev of streamEvents(step, rec.body)) {
      if (step.stallAfterEvents !== undefined && sent++ >= step.stallAfterEvents) {
        await closedPromise;
        return;
      }
      if (ev.delta && deltas++ > 0 && step.chunkDelayMs) await wait(step.chunkDelayMs);
      if (closed) return;
      res.write(frame(ev.type, ev.payload));
    }
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${HOST}:${port}`,
    requests,
    script: (...steps) => void queue.push(...steps),
    respondWith: (fn) => void (responder = fn),
    activeRequests: () => active,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function sendError(res: ServerResponse, status: number, name: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify({ message });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-amzn-requestid': randomUUID(),
    'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    ...headers,
  });
  res.end(body);
}

function sendStepError(res: ServerResponse, error: StepError): void {
  const [name, message] = ERRORS[errorKindOf(error)];
  sendError(res, error.status, name, error.message ?? message, error.retryAfter === undefined ? {} : { 'retry-after': String(error.retryAfter) });
}

/** One binary event-stream message: `:event-type` names the union member, the payload is its JSON. */
function frame(eventType: string, payload: Record<string, unknown>): Uint8Array {
  const headers: MessageHeaders = {
    ':event-type': { type: 'string', value: eventType },
    ':content-type': { type: 'string', value: 'application/json' },
    ':message-type': { type: 'string', value: 'event' },
  };
  // Bedrock pads every event with a `p` field so sizes do not leak the content.
  const body = JSON.stringify({ ...payload, p: 'abcdefgh' });
  return codec.encode({ headers, body: new Uint8Array(Buffer.from(body, 'utf8')) });
}

interface BedrockEvent {
  type: string;
  payload: Record<string, unknown>;
  delta?: boolean;
}

function streamEvents(step: Step, body: Record<string, unknown>): BedrockEvent[] {
  const events: BedrockEvent[] = [{ type: 'messageStart', payload: { role: 'assistant' } }];
  let index = 0;
  if (step.reasoning) {
    for (const piece of splitDeltas(step.reasoning))
      events.push({ type: 'contentBlockDelta', payload: { contentBlockIndex: index, delta: { reasoningContent: { text: piece } } }, delta: true });
    // Claude's extended thinking (on through additionalModelRequestFields) signs its reasoning, as on the Anthropic API.
    if (thinkingBudgetOf(body) !== undefined) {
      events.push({
        type: 'contentBlockDelta',
        payload: { contentBlockIndex: index, delta: { reasoningContent: { signature: randomId('sig_', 24) } } },
        delta: true,
      });
    }
    events.push({ type: 'contentBlockStop', payload: { contentBlockIndex: index++ } });
  }
  if (step.text) {
    for (const piece of splitDeltas(step.text))
      events.push({ type: 'contentBlockDelta', payload: { contentBlockIndex: index, delta: { text: piece } }, delta: true });
    events.push({ type: 'contentBlockStop', payload: { contentBlockIndex: index++ } });
  }
  for (const tc of step.toolCalls ?? []) {
    events.push({
      type: 'contentBlockStart',
      payload: { contentBlockIndex: index, start: { toolUse: { toolUseId: tc.id ?? randomId('tooluse_'), name: tc.name } } },
    });
    for (const frag of splitFragments(tc.arguments))
      events.push({ type: 'contentBlockDelta', payload: { contentBlockIndex: index, delta: { toolUse: { input: frag } } }, delta: true });
    events.push({ type: 'contentBlockStop', payload: { contentBlockIndex: index++ } });
  }
  events.push({ type: 'messageStop', payload: { stopReason: STOP_REASONS[finishOf(step)] } });
  const u = usageOf(step, body);
  events.push({
    type: 'metadata',
    payload: {
      usage: {
        inputTokens: u.input,
        outputTokens: u.output,
        totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
        cacheReadInputTokens: u.cacheRead,
        cacheWriteInputTokens: u.cacheWrite,
      },
      metrics: { latencyMs: 42 },
    },
  });
  return events;
}

/** `additionalModelRequestFields.thinking.budget_tokens` when extended thinking is on. */
function thinkingBudgetOf(body: Record<string, unknown>): unknown {
  const extra = body.additionalModelRequestFields;
  const thinking = isRecord(extra) ? extra.thinking : undefined;
  return isRecord(thinking) && thinking.type === 'enabled' ? (thinking.budget_tokens ?? null) : undefined;
}

/** Claude's extended-thinking rules as Bedrock passes them on: the budget, and signed thinking first in a tool loop. */
function thinkingProblem(body: Record<string, unknown>, messages: unknown[]): string | undefined {
  const budget = thinkingBudgetOf(body);
  if (budget === undefined) return undefined;
  if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  const inference = body.inferenceConfig;
  const maxTokens = isRecord(inference) ? inference.maxTokens : undefined;
  if (typeof maxTokens === 'number' && budget >= maxTokens) return '`max_tokens` must be greater than `thinking.budget_tokens`.';
  const last = messages.at(-1);
  const assistant = messages.at(-2);
  const toolLoop = isRecord(last) && Array.isArray(last.content) && last.content.some((b: unknown) => isRecord(b) && isRecord(b.toolResult));
  if (!toolLoop || !isRecord(assistant) || !Array.isArray(assistant.content)) return undefined;
  const first: unknown = assistant.content[0];
  const reasoning = isRecord(first) && isRecord(first.reasoningContent) ? first.reasoningContent : undefined;
  const signed =
    reasoning &&
    (isRecord(reasoning.reasoningText)
      ? typeof reasoning.reasoningText.signature === 'string' && reasoning.reasoningText.signature !== ''
      : reasoning.redactedContent !== undefined);
  if (signed) return undefined;
  return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${reasoning ? 'thinking without a signature' : 'text'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`;
}

/** The Converse rules a broken conversion would trip over; the message is Bedrock's wording. */
function validate(body: Record<string, unknown>): string | undefined {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  const thinking = thinkingProblem(body, messages);
  if (thinking) return thinking;
  let pendingToolUse: string[] = [];
  let usesTools = false;
  let cachePoints = Array.isArray(body.system) ? body.system.filter((b: unknown) => isRecord(b) && 'cachePoint' in b).length : 0;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isRecord(m) || !Array.isArray(m.content)) return `messages.${i}: content is required`;
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (m.role !== expected)
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
    const results: string[] = [];
    for (const block of m.content as unknown[]) {
      if (!isRecord(block)) return `messages.${i}: invalid content block`;
      if ('cachePoint' in block) cachePoints++;
      if (typeof block.text === 'string' && block.text.trim() === '')
        return 'The text field in the ContentBlock object is blank. Add text to the text field, and try again.';
      if (isRecord(block.toolUse)) usesTools = true;
      if (isRecord(block.toolResult)) {
        usesTools = true;
        results.push(String(block.toolResult.toolUseId));
      }
    }
    if (m.role === 'user' && pendingToolUse.length > 0) {
      const missing = pendingToolUse.filter((id) => !results.includes(id));
      if (missing.length > 0) return `Expected toolResult blocks at messages.${i}.content for the following Ids: ${missing.join(', ')}`;
    }
    pendingToolUse =
      m.role === 'assistant'
        ? (m.content as Record<string, unknown>[]).filter((b) => isRecord(b.toolUse)).map((b) => String((b.toolUse as Record<string, unknown>).toolUseId))
        : [];
  }
  if (usesTools && !isRecord(body.toolConfig)) return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  if (cachePoints > MAX_CACHE_POINTS) return `A maximum of ${MAX_CACHE_POINTS} cache points may be provided. Found: ${cachePoints}.`;
  return undefined;
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m: unknown = messages[i];
    if (!isRecord(m) || m.role !== 'user' || !Array.isArray(m.content)) continue;
    const text = m.content.map((b: unknown) => (isRecord(b) && typeof b.text === 'string' ? b.text : '')).join('');
    if (text !== '') return text;
  }
  return '';
}
