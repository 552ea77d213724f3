/**
 * Stand-in for the OpenAI Chat Completions API (POST /v1/chat/completions), byte-faithful where clients care:
 * `data: {chunk}\n\n` SSE ending in `data: [DONE]`, tool calls streamed by index (id and name first, then
 * argument fragments), the usage chunk with empty `choices` when `stream_options.include_usage` is set,
 * `{error:{message,type,param,code}}` bodies and the `x-request-id` header.
 */
import { chatCompletionsView } from './prompt-cache.js';
import {
  errorKindOf,
  finishOf,
  isRecord,
  lastTextOf,
  randomId,
  splitDeltas,
  splitFragments,
  startFakeServer,
  usageOf,
  type HttpReply,
  type ResolvedUsage,
  type SseEvent,
  type WireFormat,
} from './server.js';
import { openAIImageProblem } from './images.js';
import { TRANSCRIPTION_PATH, transcriptionRoute, type TranscriptionFake } from './transcriptions.js';
import { responsesWire } from './openai-responses.js';
import type { FakeLLM, FakeOpenAIOptions, Step, StepError } from './types.js';
import { openAIParametersError } from './tool-schemas.js';
import { compatProblem, reasoningDetailDeltas, toolCallExtra, type CompatState } from './openai-compat.js';
import { createSpeech, SPEECH_PATH } from './speech.js';

/** The limit named in context-length errors. */
export const FAKE_OPENAI_CONTEXT_LIMIT = 128_000;
const SYSTEM_FINGERPRINT = 'fp_fake0000';

type Body = Record<string, unknown>;

/** The OpenAI stand-in also transcribes audio (transcriptions.ts). */
export type FakeOpenAI = FakeLLM & TranscriptionFake;

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const reasoningField = opts.reasoningField ?? 'reasoning_content';
  const compat: CompatState = { opts, issued: new Map() };
  const speech = createSpeech();
  const audio = transcriptionRoute();
  const wire: WireFormat = {
    basePath: '/v1',
    completionPath: '/v1/chat/completions',
    requestIdHeader: 'x-request-id',
    checkAuth,
    validate: (body) => {
      const problem = validate(body) ?? compatProblem(compat, body);
      return typeof problem === 'string' ? apiError(400, problem, 'invalid_request_error', null, null) : problem;
    },
    lastUserText: (body) => lastTextOf(body.messages, textOf),
    errorReply,
    notFoundReply: (method, path) => apiError(404, `Invalid URL (${method} ${path})`, 'invalid_request_error', null, null),
    streamEvents: (step, body) => streamEvents(step, body, reasoningField, compat),
    jsonBody: (step, body) => jsonBody(step, body, reasoningField),
    routes: { [SPEECH_PATH]: speech.route, [TRANSCRIPTION_PATH]: audio.route },
    promptCache: { rule: 'openai', view: chatCompletionsView },
  };
  // One /v1 like the real API: Chat Completions and Responses side by side (openai-responses.ts), speech and transcription.
  const fake = await startFakeServer([wire, responsesWire(wire)], opts);
  return Object.assign(fake, audio.fake, { speech: speech.control });
}

function apiError(status: number, message: string, type: string, param: string | null, code: string | null): HttpReply {
  return { status, body: { error: { message, type, param, code } } };
}

function checkAuth(headers: Record<string, string>, apiKey: string | undefined): HttpReply | undefined {
  const match = /^Bearer (.*)$/i.exec(headers.authorization ?? '');
  const key = match?.[1]?.trim() ?? '';
  if (key === '') {
    return apiError(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      'invalid_request_error',
      null,
      null,
    );
  }
  if (apiKey !== undefined && key !== apiKey) {
    return apiError(
      401,
      `Incorrect API key provided: ${key.slice(0, 3)}***${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      'invalid_request_error',
      null,
      'invalid_api_key',
    );
  }
  return undefined;
}

/** The rules real servers enforce that a broken message conversion would trip over. */
function validate(body: Body): HttpReply | undefined {
  const bad = (message: string, param: string | null): HttpReply => apiError(400, message, 'invalid_request_error', param, null);
  if (typeof body.model !== 'string' || body.model === '') return bad('you must provide a model parameter', null);
  const messages = body.messages;
  if (!Array.isArray(messages)) return bad("Missing required parameter: 'messages'.", 'messages');
  if (messages.length === 0)
    return bad("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages');
  const imageProblem = openAIImageProblem(messages);
  if (imageProblem) return apiError(400, imageProblem.message, 'invalid_request_error', null, imageProblem.code);

  let pending: string[] = [];
  let pendingAt = -1;
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isRecord(m) || !['system', 'developer', 'user', 'assistant', 'tool'].includes(String(m.role))) {
      return bad(
        `Invalid value: '${isRecord(m) ? String(m.role) : typeof m}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${i}].role`,
      );
    }
    if (m.role === 'tool') {
      const id = m.tool_call_id;
      if (typeof id !== 'string' || !pending.includes(id)) {
        return bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${i}].role`);
      }
      pending = pending.filter((p) => p !== id);
      continue;
    }
    if (pending.length > 0) break;
    if (m.role === 'assistant' && Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
      pending = m.tool_calls.map((tc: unknown) => (isRecord(tc) ? String(tc.id) : ''));
      pendingAt = i;
    }
  }
  if (pending.length > 0) {
    return bad(
      `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
      `messages.[${pendingAt}].role`,
    );
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return bad("Invalid type for 'tools': expected an array.", 'tools');
    for (let i = 0; i < body.tools.length; i++) {
      const t: unknown = body.tools[i];
      if (!isRecord(t) || t.type !== 'function' || !isRecord(t.function) || typeof t.function.name !== 'string') {
        return bad(`Missing required parameter: 'tools[${i}].function'.`, `tools[${i}].function`);
      }
      const schemaError = t.function.parameters === undefined ? null : openAIParametersError(t.function.name, t.function.parameters);
      if (schemaError) return apiError(400, schemaError, 'invalid_request_error', `tools[${i}].function.parameters`, 'invalid_function_parameters');
    }
  }
  return undefined;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p: unknown) => (isRecord(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

function errorReply(error: StepError, body: Body): HttpReply {
  const model = String(body.model ?? 'unknown');
  switch (errorKindOf(error)) {
    case 'rate_limit': {
      const wait = error.retryAfter ?? 1;
      return apiError(
        error.status,
        `Rate limit reached for ${model} in organization org-fake on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${wait}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        'requests',
        null,
        'rate_limit_exceeded',
      );
    }
    case 'auth':
      return apiError(
        error.status,
        'Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.',
        'invalid_request_error',
        null,
        'invalid_api_key',
      );
    case 'not_found':
      return apiError(error.status, `The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found');
    case 'payment_required':
      // OpenRouter's shape: the status repeated as `code`, no `type`.
      return { status: error.status, body: { error: { code: error.status, message: 'Insufficient credits. Add more using https://openrouter.ai/credits' } } };
    case 'too_large':
      return apiError(error.status, 'Request body too large. Please reduce the size of your request.', 'invalid_request_error', null, null);
    case 'context_length':
      return apiError(
        error.status,
        `This model's maximum context length is ${FAKE_OPENAI_CONTEXT_LIMIT} tokens. However, your messages resulted in ${FAKE_OPENAI_CONTEXT_LIMIT + 4521} tokens. Please reduce the length of the messages.`,
        'invalid_request_error',
        'messages',
        'context_length_exceeded',
      );
    case 'overloaded':
      return apiError(error.status, 'The engine is currently overloaded, please try again later.', 'server_error', null, null);
    case 'server':
      return apiError(error.status, 'The server had an error while processing your request. Sorry about that!', 'server_error', null, null);
  }
}

function usageBody(u: ResolvedUsage): Record<string, unknown> {
  const prompt = u.input + u.cacheRead;
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    // OpenRouter's addition (https://openrouter.ai/docs/use-cases/usage-accounting): the call's cost in credits (USD).
    ...(u.cost !== undefined ? { cost: u.cost } : {}),
  };
}

function streamEvents(step: Step, body: Body, reasoningField: string, compat: CompatState): SseEvent[] {
  const id = randomId('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);
  const model = String(body.model);
  const streamOptions = body.stream_options;
  const includeUsage = isRecord(streamOptions) && streamOptions.include_usage === true;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    system_fingerprint: SYSTEM_FINGERPRINT,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });

  const toolCalls = (step.toolCalls ?? []).map((tc) => ({ ...tc, id: tc.id ?? randomId('call_') }));
  const events: SseEvent[] = [];
  const textFirst = step.text !== undefined || step.reasoning !== undefined || toolCalls.length === 0;
  events.push({ data: chunk({ role: 'assistant', content: textFirst ? '' : null, refusal: null }) });
  for (const piece of splitDeltas(step.reasoning ?? '')) events.push({ data: chunk({ [reasoningField]: piece }), delta: true });
  for (const detail of reasoningDetailDeltas(
    compat,
    step,
    toolCalls.map((tc) => tc.id),
  ))
    events.push({ data: chunk(detail), delta: true });
  for (const piece of splitDeltas(step.text ?? '')) events.push({ data: chunk({ content: piece }), delta: true });
  toolCalls.forEach((tc, index) => {
    const head = {
      index,
      ...(tc.omitId ? {} : { id: tc.id }),
      type: 'function',
      function: { name: tc.name, arguments: '' },
      ...toolCallExtra(compat, tc.id, index),
    };
    events.push({ data: chunk({ tool_calls: [head] }), delta: true });
    for (const frag of splitFragments(tc.arguments)) {
      events.push({ data: chunk({ tool_calls: [{ index, function: { arguments: frag } }] }), delta: true });
    }
  });
  events.push({ data: chunk({}, finishOf(step)) });
  if (includeUsage) {
    events.push({
      data: { id, object: 'chat.completion.chunk', created, model, system_fingerprint: SYSTEM_FINGERPRINT, choices: [], usage: usageBody(usageOf(step, body)) },
    });
  }
  events.push({ data: '[DONE]' });
  return events;
}

function jsonBody(step: Step, body: Body, reasoningField: string): unknown {
  const toolCalls = (step.toolCalls ?? []).map((tc) => ({
    ...(tc.omitId ? {} : { id: tc.id ?? randomId('call_') }),
    type: 'function',
    function: { name: tc.name, arguments: tc.arguments },
  }));
  return {
    id: randomId('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: String(body.model),
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: step.text ?? null,
          refusal: null,
          annotations: [],
          ...(step.reasoning === undefined ? {} : { [reasoningField]: step.reasoning }),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishOf(step),
      },
    ],
    usage: usageBody(usageOf(step, body)),
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}
