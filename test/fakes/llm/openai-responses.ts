/**
 * Stand-in for the OpenAI Responses API (POST /v1/responses), served by the OpenAI stand-in next to Chat
 * Completions. Streams named SSE events in the real order (response.created, response.in_progress, then per
 * output item: output_item.added, its content or argument deltas, output_item.done; finally response.completed
 * or response.incomplete with usage), without a [DONE] sentinel. Input rules the real API enforces and a broken
 * conversion would trip over: every function_call needs its function_call_output, an output needs its call,
 * and with `store: false` a reasoning item can only come back with its encrypted_content.
 */
import { responsesView } from './prompt-cache.js';
import { finishOf, isRecord, randomId, splitDeltas, splitFragments, usageOf, type HttpReply, type SseEvent, type WireFormat } from './server.js';
import type { Step } from './types.js';
import { openAIImageProblem } from './images.js';

type Body = Record<string, unknown>;
/** Prefix of the fake's encrypted reasoning (real ones are Fernet tokens, which start the same way). */
const ENCRYPTED_PREFIX = 'gAAAAB';

/** The Responses wire, sharing auth and error bodies with the Chat Completions wire it is served beside. */
export function responsesWire(chat: Pick<WireFormat, 'checkAuth' | 'errorReply' | 'notFoundReply'>): WireFormat {
  return {
    basePath: '/v1',
    completionPath: '/v1/responses',
    requestIdHeader: 'x-request-id',
    checkAuth: chat.checkAuth,
    validate,
    lastUserText,
    errorReply: chat.errorReply,
    notFoundReply: chat.notFoundReply,
    streamEvents,
    jsonBody: (step, body) => responseObject(step, body, 'completed', outputItems(step, body)),
    promptCache: { rule: 'openai', view: responsesView },
  };
}

function bad(message: string, param: string | null): HttpReply {
  return { status: 400, body: { error: { message, type: 'invalid_request_error', param, code: null } } };
}

/** `output` is a string or a list of input_text / input_image / input_file parts; images as the API checks them. */
function functionOutputProblem(output: unknown, i: number): HttpReply | undefined {
  if (typeof output === 'string') return undefined;
  const param = `input[${i}].output`;
  if (!Array.isArray(output)) return bad(`Invalid type for '${param}': expected one of a string or an array of objects.`, param);
  for (let k = 0; k < output.length; k++) {
    const part: unknown = output[k];
    const type = isRecord(part) ? String(part.type) : typeof part;
    if (!['input_text', 'input_image', 'input_file'].includes(type)) {
      return bad(`Invalid value: '${type}'. Supported values are: 'input_text', 'input_image', and 'input_file'.`, `${param}[${k}].type`);
    }
    if (type === 'input_image') {
      const problem = openAIImageProblem([{ role: 'user', content: [{ type: 'image_url', image_url: { url: (part as Record<string, unknown>).image_url } }] }]);
      if (problem) return bad(problem.message, `${param}[${k}].image_url`);
    }
  }
  return undefined;
}

function validate(body: Body): HttpReply | undefined {
  if (typeof body.model !== 'string' || body.model === '') return bad("Missing required parameter: 'model'.", 'model');
  const input = body.input;
  if (typeof input === 'string') return undefined;
  if (!Array.isArray(input)) return bad("Missing required parameter: 'input'.", 'input');
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    if (!isRecord(item)) return bad(`Invalid type for 'input[${i}]': expected an object.`, `input[${i}]`);
    const type = item.type ?? 'message';
    if (type === 'message' && !['user', 'assistant', 'system', 'developer'].includes(String(item.role))) {
      return bad(`Invalid value: '${String(item.role)}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`, `input[${i}].role`);
    }
    if (type === 'function_call') calls.add(String(item.call_id));
    if (type === 'function_call_output') {
      if (!calls.has(String(item.call_id))) return bad(`No tool call found for function call output with call_id ${String(item.call_id)}.`, 'input');
      const problem = functionOutputProblem(item.output, i);
      if (problem) return problem;
      answered.add(String(item.call_id));
    }
    if (type === 'reasoning') {
      const encrypted = item.encrypted_content;
      if (typeof encrypted !== 'string') {
        return {
          status: 404,
          body: {
            error: {
              message: `Item with id '${String(item.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
              type: 'invalid_request_error',
              param: 'input',
              code: null,
            },
          },
        };
      }
      if (!encrypted.startsWith(ENCRYPTED_PREFIX)) return bad(`The encrypted content for item ${String(item.id)} could not be verified.`, null);
    }
  }
  const missing = [...calls].filter((c) => !answered.has(c));
  if (missing.length > 0) return bad(`No tool output found for function call ${missing[0]}.`, 'input');
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return bad("Invalid type for 'tools': expected an array.", 'tools');
    for (let i = 0; i < body.tools.length; i++) {
      const t: unknown = body.tools[i];
      if (!isRecord(t) || t.type !== 'function' || typeof t.name !== 'string')
        return bad(`Missing required parameter: 'tools[${i}].name'.`, `tools[${i}].name`);
    }
  }
  return undefined;
}

function lastUserText(body: Body): string {
  if (typeof body.input === 'string') return body.input;
  if (!Array.isArray(body.input)) return '';
  for (let i = body.input.length - 1; i >= 0; i--) {
    const item: unknown = body.input[i];
    if (!isRecord(item) || item.role !== 'user') continue;
    if (typeof item.content === 'string') return item.content;
    if (Array.isArray(item.content)) {
      return item.content.map((p: unknown) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
    }
  }
  return '';
}

interface Items {
  reasoning?: Record<string, unknown>;
  message?: Record<string, unknown>;
  calls: Record<string, unknown>[];
}

/** The output items a step produces, complete (as in output_item.done and the final response). */
function outputItems(step: Step, body: Body): Items {
  const include = Array.isArray(body.include) ? body.include : [];
  const items: Items = { calls: [] };
  if (step.reasoning !== undefined) {
    const encrypted = include.includes('reasoning.encrypted_content')
      ? { encrypted_content: ENCRYPTED_PREFIX + Buffer.from(JSON.stringify({ model: body.model, r: step.reasoning })).toString('base64') }
      : {};
    items.reasoning = { id: randomId('rs_'), type: 'reasoning', summary: [{ type: 'summary_text', text: step.reasoning }], ...encrypted };
  }
  if (step.text !== undefined || step.toolCalls === undefined) {
    items.message = {
      id: randomId('msg_'),
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: step.text ?? '', annotations: [], logprobs: [] }],
    };
  }
  for (const tc of step.toolCalls ?? []) {
    items.calls.push({
      id: randomId('fc_'),
      type: 'function_call',
      status: 'completed',
      call_id: tc.id ?? randomId('call_'),
      name: tc.name,
      arguments: tc.arguments,
    });
  }
  return items;
}

function responseObject(step: Step, body: Body, status: string, items: Items | null): Record<string, unknown> {
  const output = items ? [items.reasoning, items.message, ...items.calls].filter((x) => x !== undefined) : [];
  const u = usageOf(step, { messages: body.input });
  const truncated = status === 'incomplete';
  return {
    id: responseIdOf(body),
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: truncated ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: String(body.model),
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    store: body.store ?? true,
    temperature: 1,
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: items
      ? {
          input_tokens: u.input + u.cacheRead,
          input_tokens_details: { cached_tokens: u.cacheRead },
          output_tokens: u.output,
          output_tokens_details: { reasoning_tokens: step.reasoning ? Math.ceil(step.reasoning.length / 4) : 0 },
          total_tokens: u.input + u.cacheRead + u.output,
        }
      : null,
    metadata: {},
  };
}

/** One id per request body, so every event of a stream names the same response. */
const ids = new WeakMap<Body, string>();
function responseIdOf(body: Body): string {
  let id = ids.get(body);
  if (!id) ids.set(body, (id = randomId('resp_')));
  return id;
}

function streamEvents(step: Step, body: Body): SseEvent[] {
  const events: SseEvent[] = [];
  let seq = 0;
  const emit = (type: string, data: Record<string, unknown>, delta = false): void => {
    events.push({ event: type, data: { type, sequence_number: seq++, ...data }, ...(delta ? { delta: true } : {}) });
  };
  const items = outputItems(step, body);
  emit('response.created', { response: responseObject(step, body, 'in_progress', null) });
  emit('response.in_progress', { response: responseObject(step, body, 'in_progress', null) });
  let index = 0;

  if (items.reasoning) {
    const item = items.reasoning;
    const output_index = index++;
    const text = step.reasoning ?? '';
    emit('response.output_item.added', { output_index, item: { id: item.id, type: 'reasoning', summary: [] } });
    emit('response.reasoning_summary_part.added', { item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    for (const piece of splitDeltas(text))
      emit('response.reasoning_summary_text.delta', { item_id: item.id, output_index, summary_index: 0, delta: piece }, true);
    emit('response.reasoning_summary_text.done', { item_id: item.id, output_index, summary_index: 0, text });
    emit('response.reasoning_summary_part.done', { item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text } });
    emit('response.output_item.done', { output_index, item });
  }
  if (items.message) {
    const item = items.message;
    const output_index = index++;
    const text = step.text ?? '';
    const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
    emit('response.content_part.added', { item_id: item.id, output_index, content_index: 0, part });
    for (const piece of splitDeltas(text))
      emit('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta: piece, logprobs: [] }, true);
    emit('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text, logprobs: [] });
    emit('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part: { ...part, text } });
    emit('response.output_item.done', { output_index, item });
  }
  for (const item of items.calls) {
    const output_index = index++;
    const args = String(item.arguments);
    emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const frag of splitFragments(args)) emit('response.function_call_arguments.delta', { item_id: item.id, output_index, delta: frag }, true);
    emit('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: args });
    emit('response.output_item.done', { output_index, item });
  }
  const truncated = finishOf(step) === 'length';
  const final = responseObject(step, body, truncated ? 'incomplete' : 'completed', items);
  emit(truncated ? 'response.incomplete' : 'response.completed', { response: final });
  return events;
}
