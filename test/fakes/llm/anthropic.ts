/**
 * Stand-in for the Anthropic Messages API (POST /v1/messages): named SSE events in the real order
 * (message_start, ping, content_block_start / _delta / _stop per block, message_delta with stop_reason and
 * cumulative usage, message_stop), `{type:'error', error:{type,message}}` bodies, 529 overloaded and the
 * `request-id` header. Auth: `x-api-key` or `Authorization: Bearer` (the installed SDK sends the latter).
 */
import { anthropicView } from './prompt-cache.js';
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
import { anthropicImageProblem } from './images.js';
import { anthropicInputSchemaError } from './tool-schemas.js';
import type { FakeAnthropicOptions, FakeLLM, Step, StepError, StepFinish } from './types.js';

/** The limit named in context-length errors. */
export const FAKE_ANTHROPIC_CONTEXT_LIMIT = 200_000;

type Body = Record<string, unknown>;

/** The API refuses a request with more `cache_control` breakpoints than this (prompt-cache.ts). */
const MAX_CACHE_BREAKPOINTS = 4;

const STOP_REASONS: Record<StepFinish, string> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' };

export function startFakeAnthropic(opts: FakeAnthropicOptions = {}): Promise<FakeLLM> {
  // The thinking signatures this stand-in handed out.
  const signed = new Set<string>();
  const wire: WireFormat = {
    basePath: '',
    completionPath: '/v1/messages',
    requestIdHeader: 'request-id',
    checkAuth,
    validate: (body, headers) => validate(body, headers) ?? (opts.checkSignatures ? signatureProblem(body, signed) : undefined),
    lastUserText: (body) => lastTextOf(body.messages, textOf),
    errorReply,
    notFoundReply: () => apiError(404, 'not_found_error', 'Not Found'),
    streamEvents: (step, body) => streamEvents(step, body, signed),
    jsonBody: (step, body) => jsonBody(step, body, signed),
    promptCache: { rule: 'anthropic', view: anthropicView },
  };
  return startFakeServer(wire, opts);
}

function apiError(status: number, type: string, message: string): HttpReply {
  return { status, body: { type: 'error', error: { type, message } } };
}

/**
 * OAuth access tokens (`sk-ant-oat…`) work only as a bearer token with the `oauth-2025-04-20` beta; as an x-api-key,
 * or without the beta, the real API refuses them with these messages.
 */
function oauthProblem(headers: Record<string, string>, bearer: string | undefined): HttpReply | undefined {
  if (headers['x-api-key']?.startsWith('sk-ant-oat')) return apiError(401, 'authentication_error', 'invalid x-api-key');
  if (!bearer?.startsWith('sk-ant-oat')) return undefined;
  const betas = (headers['anthropic-beta'] ?? '').split(',').map((b) => b.trim());
  return betas.includes('oauth-2025-04-20') ? undefined : apiError(401, 'authentication_error', 'OAuth authentication is currently not supported.');
}

function checkAuth(headers: Record<string, string>, apiKey: string | undefined): HttpReply | undefined {
  const bearer = /^Bearer (.*)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  const key = headers['x-api-key'] ?? bearer ?? '';
  if (key === '') return apiError(401, 'authentication_error', 'x-api-key header is required');
  const oauth = oauthProblem(headers, bearer);
  if (oauth) return oauth;
  if (apiKey !== undefined && key !== apiKey) return apiError(401, 'authentication_error', 'invalid x-api-key');
  return undefined;
}

/**
 * Extended thinking's rules: a budget of at least 1024 below max_tokens, thinking blocks passed back with their
 * signature, and (in a tool loop) the assistant message with the last tool_use blocks starting with its thinking.
 */
function extendedThinkingProblem(body: Body, messages: unknown[]): string | undefined {
  const thinking = body.thinking;
  if (!isRecord(thinking) || thinking.type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (typeof body.max_tokens === 'number' && budget >= body.max_tokens) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    for (let j = 0; j < m.content.length; j++) {
      const b: unknown = m.content[j];
      if (isRecord(b) && b.type === 'thinking' && (typeof b.signature !== 'string' || b.signature === '')) {
        return `messages.${i}.content.${j}.thinking.signature: Field required`;
      }
    }
  }
  // The tool loop in progress: the last user message holds tool results for the assistant message before it.
  const last = messages.at(-1);
  const toolLoop = isRecord(last) && Array.isArray(last.content) && last.content.some((b: unknown) => isRecord(b) && b.type === 'tool_result');
  const assistant = messages.at(-2);
  if (toolLoop && isRecord(assistant) && Array.isArray(assistant.content)) {
    const first: unknown = assistant.content[0];
    const type = isRecord(first) ? String(first.type) : 'text';
    if (type !== 'thinking' && type !== 'redacted_thinking') {
      return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
    }
  }
  return undefined;
}

/**
 * The rules a broken message conversion would trip over. Strict role alternation is stricter than today's API
 * (which merges consecutive turns) on purpose: Herald promises alternating history.
 */
function validate(body: Body, headers: Record<string, string>): HttpReply | undefined {
  const bad = (message: string): HttpReply => apiError(400, 'invalid_request_error', message);
  if (!headers['anthropic-version']) return bad('anthropic-version: header is required');
  if (typeof body.model !== 'string' || body.model === '') return bad('model: Field required');
  if (typeof body.max_tokens !== 'number') return bad('max_tokens: Field required');
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system) || !body.system.every((b: unknown) => isRecord(b) && b.type === 'text' && typeof b.text === 'string')) {
      return bad('system: Input should be a valid string or a list of text blocks');
    }
  }
  if (!Array.isArray(body.messages)) return bad('messages: Field required');
  const messages: unknown[] = body.messages;
  if (messages.length === 0) return bad('messages: at least one message is required');
  const imageProblem = anthropicImageProblem(messages);
  if (imageProblem) return bad(imageProblem);
  const breakpoints = anthropicView(body).breakpoints.length;
  if (breakpoints > MAX_CACHE_BREAKPOINTS) return bad(`A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`);

  const hasToolBlocks = messages.some(
    (m) => isRecord(m) && Array.isArray(m.content) && m.content.some((b: unknown) => isRecord(b) && (b.type === 'tool_use' || b.type === 'tool_result')),
  );
  if (hasToolBlocks && !(Array.isArray(body.tools) && body.tools.length > 0)) {
    return bad('Requests which include `tool_use` or `tool_result` blocks must define tools.');
  }

  let previousToolUses: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isRecord(m) || (m.role !== 'user' && m.role !== 'assistant')) {
      return bad(`messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    const prev = messages[i - 1];
    if (isRecord(prev) && prev.role === m.role) {
      return bad(`messages: roles must alternate between "user" and "assistant", but found multiple "${m.role}" roles in a row`);
    }
    const blocks: unknown[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : [];
    const isFinalAssistant = i === messages.length - 1 && m.role === 'assistant';
    if (blocks.length === 0 && !isFinalAssistant) {
      return bad(`messages.${i}: all messages must have non-empty content except for the optional final assistant message`);
    }
    const results: string[] = [];
    const uses: string[] = [];
    let sawOther = false;
    for (let j = 0; j < blocks.length; j++) {
      const b = blocks[j];
      if (!isRecord(b)) return bad(`messages.${i}.content.${j}: Input should be a valid dictionary`);
      if (b.type === 'text' && (typeof b.text !== 'string' || (b.text === '' && !isFinalAssistant))) {
        return bad('messages: text content blocks must be non-empty');
      }
      if (b.type === 'tool_use') {
        if (m.role !== 'assistant') return bad(`messages.${i}.content.${j}: tool_use blocks are only allowed in assistant messages`);
        if (!isRecord(b.input)) return bad(`messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`);
        uses.push(String(b.id));
      } else if (b.type === 'tool_result') {
        if (m.role !== 'user') return bad(`messages.${i}.content.${j}: tool_result blocks are only allowed in user messages`);
        if (sawOther) return bad(`messages.${i}: tool_result blocks must come before any other content in a user message`);
        results.push(String(b.tool_use_id));
      } else {
        sawOther = true;
      }
    }
    const unexpected = results.filter((id) => !previousToolUses.includes(id));
    if (unexpected.length > 0) {
      return bad(
        `messages.${i}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      );
    }
    const unanswered = previousToolUses.filter((id) => !results.includes(id));
    if (unanswered.length > 0) {
      return bad(
        `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
    previousToolUses = uses;
  }
  const thinkingProblem = extendedThinkingProblem(body, messages);
  if (thinkingProblem) return bad(thinkingProblem);
  if (previousToolUses.length > 0) {
    return bad(
      `messages.${messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${previousToolUses.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
    );
  }

  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return bad('tools: Input should be a valid list');
    for (let i = 0; i < body.tools.length; i++) {
      const t: unknown = body.tools[i];
      if (!isRecord(t) || typeof t.name !== 'string') return bad(`tools.${i}.name: Field required`);
      if (!isRecord(t.input_schema)) return bad(`tools.${i}.input_schema: Field required`);
      const schemaError = anthropicInputSchemaError(t.input_schema);
      if (schemaError) return bad(`tools.${i}.custom.${schemaError}`);
    }
  }
  return undefined;
}

/** A thinking block signed by someone else: the API's 400 for a signature it cannot verify. */
function signatureProblem(body: Body, signed: ReadonlySet<string>): HttpReply | undefined {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = 0; i < messages.length; i++) {
    const m: unknown = messages[i];
    if (!isRecord(m) || !Array.isArray(m.content)) continue;
    const j = m.content.findIndex((b: unknown) => isRecord(b) && b.type === 'thinking' && !signed.has(String(b.signature)));
    if (j !== -1) return apiError(400, 'invalid_request_error', `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
  }
  return undefined;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: unknown) => (isRecord(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('');
}

function errorReply(error: StepError, body: Body): HttpReply {
  switch (errorKindOf(error)) {
    case 'rate_limit':
      return apiError(
        error.status,
        'rate_limit_error',
        'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.',
      );
    case 'auth':
      return apiError(error.status, 'authentication_error', 'invalid x-api-key');
    case 'not_found':
      return apiError(error.status, 'not_found_error', `model: ${String(body.model)}`);
    case 'payment_required':
      return apiError(
        error.status,
        'billing_error',
        'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      );
    case 'too_large':
      return apiError(error.status, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.');
    case 'context_length':
      return apiError(
        error.status,
        'invalid_request_error',
        `prompt is too long: ${FAKE_ANTHROPIC_CONTEXT_LIMIT + 8310} tokens > ${FAKE_ANTHROPIC_CONTEXT_LIMIT} maximum`,
      );
    case 'overloaded':
      return apiError(error.status, 'overloaded_error', 'Overloaded');
    case 'server':
      return apiError(error.status, 'api_error', 'Internal server error');
  }
}

function usageBody(u: ResolvedUsage, output: number): Record<string, unknown> {
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    output_tokens: output,
    service_tier: 'standard',
  };
}

interface Block {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  final: Record<string, unknown>;
}

/** The response's content blocks, in the order the model produces them: thinking, text, tool uses. */
function blocksOf(step: Step, signed: Set<string>): Block[] {
  const blocks: Block[] = [];
  if (step.reasoning !== undefined) {
    const signature = randomId('sig_', 24);
    signed.add(signature);
    blocks.push({
      start: { type: 'thinking', thinking: '', signature: '' },
      deltas: [...splitDeltas(step.reasoning).map((thinking) => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature }],
      final: { type: 'thinking', thinking: step.reasoning, signature },
    });
  }
  if (step.text !== undefined) {
    blocks.push({
      start: { type: 'text', text: '' },
      deltas: splitDeltas(step.text).map((text) => ({ type: 'text_delta', text })),
      final: { type: 'text', text: step.text },
    });
  }
  for (const tc of step.toolCalls ?? []) {
    const id = tc.id ?? randomId('toolu_', 12);
    let input: unknown = {};
    try {
      input = JSON.parse(tc.arguments);
    } catch {
      // Scripted malformed arguments are streamed verbatim; the non-streaming body falls back to {}.
    }
    blocks.push({
      start: { type: 'tool_use', id, name: tc.name, input: {} },
      deltas: [
        { type: 'input_json_delta', partial_json: '' },
        ...splitFragments(tc.arguments).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
      ],
      final: { type: 'tool_use', id, name: tc.name, input },
    });
  }
  return blocks;
}

function streamEvents(step: Step, body: Body, signed: Set<string>): SseEvent[] {
  const usage = usageOf(step, body);
  const ev = (type: string, data: Record<string, unknown>, delta = false): SseEvent => ({ event: type, data: { type, ...data }, delta });
  const events: SseEvent[] = [
    ev('message_start', {
      message: {
        id: randomId('msg_'),
        type: 'message',
        role: 'assistant',
        model: String(body.model),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageBody(usage, 1),
      },
    }),
    ev('ping', {}),
  ];
  blocksOf(step, signed).forEach((block, index) => {
    events.push(ev('content_block_start', { index, content_block: block.start }));
    for (const delta of block.deltas) events.push(ev('content_block_delta', { index, delta }, true));
    events.push(ev('content_block_stop', { index }));
  });
  events.push(
    ev('message_delta', { delta: { stop_reason: STOP_REASONS[finishOf(step)], stop_sequence: null }, usage: usageBody(usage, usage.output) }),
    ev('message_stop', {}),
  );
  return events;
}

function jsonBody(step: Step, body: Body, signed: Set<string>): unknown {
  const usage = usageOf(step, body);
  return {
    id: randomId('msg_'),
    type: 'message',
    role: 'assistant',
    model: String(body.model),
    content: blocksOf(step, signed).map((b) => b.final),
    stop_reason: STOP_REASONS[finishOf(step)],
    stop_sequence: null,
    usage: usageBody(usage, usage.output),
  };
}
