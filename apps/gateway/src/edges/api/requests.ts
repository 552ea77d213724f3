/**
 * What a /v1 request asks for, read from either wire format into one shape (`ApiInput`), with a 400 in OpenAI's
 * shape naming the parameter for anything Herald cannot take. Parameters Herald has no use for (temperature,
 * max_tokens, tools the client would run itself, …) are accepted and ignored: the agent, its model and its tools
 * are the server's.
 */
import type { Attachment } from '@herald/adapters';
import { isRecord, type ChatMessage } from '@herald/agent-core';
import { z } from 'zod';
import { MAX_INBOUND_CHARS } from '../ingress/router.js';
import { badRequest } from './errors.js';

export interface ApiInput {
  model: string;
  stream: boolean;
  /** Chat Completions `stream_options.include_usage`: a last chunk with the usage. */
  includeUsage: boolean;
  /** The conversation to continue (X-Herald-Session, else `user`); null: stateless, the client sends the history. */
  session: string | null;
  /** The caller's `user` field, kept as the session's user. */
  user: string | null;
  /** The client's own instructions (system and developer messages, Responses `instructions`). */
  system: string | null;
  /** What the client sent before its new message (only used without a session: with one, the store has it). */
  history: ChatMessage[];
  /** The new user message. */
  text: string;
  attachments: Attachment[];
}

const SESSION_HEADER = 'x-herald-session';
const MAX_SESSION_NAME = 256;

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string().min(1) }).passthrough() });
const chatMessage = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, imagePart]))]).nullish(),
  })
  .passthrough();

const chatBody = z
  .object({
    model: z.string().min(1),
    messages: z.array(chatMessage).min(1),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).passthrough().nullish(),
    user: z.string().nullish(),
  })
  .passthrough();

const inputText = z.object({ type: z.enum(['input_text', 'output_text']), text: z.string() }).passthrough();
const inputImage = z.object({ type: z.literal('input_image'), image_url: z.string().min(1) }).passthrough();
const inputMessage = z
  .object({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [inputText, inputImage]))]),
  })
  .passthrough();

const responsesBody = z
  .object({
    model: z.string().min(1),
    input: z.union([z.string(), z.array(inputMessage).min(1)]),
    instructions: z.string().nullish(),
    stream: z.boolean().nullish(),
    user: z.string().nullish(),
    previous_response_id: z.string().nullish(),
  })
  .passthrough();

/** A message as Herald reads it: its role and text, plus image links of a user message. */
interface Said {
  role: 'system' | 'user' | 'assistant';
  text: string;
  attachments: Attachment[];
}

export function parseChatCompletion(body: unknown, headers: Record<string, unknown>): ApiInput {
  const b = parse(chatBody, body);
  const said: Said[] = [];
  b.messages.forEach((m, i) => {
    // The client's own tool round trips are not Herald's: tools run on the server.
    if (m.role === 'tool') return;
    const content = m.content ?? '';
    const parts = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
    const texts: string[] = [];
    const attachments: Attachment[] = [];
    parts.forEach((p, j) => {
      if (p.type === 'text') texts.push(p.text);
      else texts.push(imageNote(p.image_url.url, `messages[${i}].content[${j}].image_url.url`));
    });
    said.push({ role: roleOf(m.role), text: texts.join('\n'), attachments });
  });
  return {
    ...conversation(said, 'messages'),
    model: b.model,
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
    ...sessionOf(headers, b.user),
  };
}

export function parseResponsesRequest(body: unknown, headers: Record<string, unknown>): ApiInput {
  const b = parse(responsesBody, body);
  if (b.previous_response_id) {
    throw badRequest('previous_response_id is not supported: continue a conversation with the X-Herald-Session header (or `user`).', 'previous_response_id');
  }
  const items = typeof b.input === 'string' ? [{ role: 'user' as const, content: b.input }] : b.input;
  const said: Said[] = items.map((m, i) => {
    const parts = typeof m.content === 'string' ? [{ type: 'input_text' as const, text: m.content }] : m.content;
    const texts: string[] = [];
    const attachments: Attachment[] = [];
    parts.forEach((p, j) => {
      if (p.type === 'input_image') texts.push(imageNote(p.image_url, `input[${i}].content[${j}].image_url`));
      else texts.push(p.text);
    });
    return { role: roleOf(m.role), text: texts.join('\n'), attachments };
  });
  if (b.instructions) said.unshift({ role: 'system', text: b.instructions, attachments: [] });
  return { ...conversation(said, 'input'), model: b.model, stream: b.stream === true, includeUsage: true, ...sessionOf(headers, b.user) };
}

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  if (!isRecord(body)) throw badRequest('The request body must be a JSON object.');
  const res = schema.safeParse(body);
  if (res.success) return res.data;
  const issue = res.error.issues[0];
  const param = paramOf(issue.path);
  const what = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : `is invalid: ${issue.message}`;
  throw badRequest(param ? `'${param}' ${what}` : issue.message, param || null);
}

/** `['messages', 0, 'content']` → `messages[0].content`, as OpenAI names parameters. */
function paramOf(path: readonly PropertyKey[]): string {
  return path.reduce<string>((acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${String(p)}` : String(p)), '');
}

function roleOf(role: string): Said['role'] {
  return role === 'system' || role === 'developer' ? 'system' : role === 'assistant' ? 'assistant' : 'user';
}

/**
 * An image the client links to, as a line of the message: platform files are fetched through each platform's own
 * file API (media/), which the HTTP API has none of yet, so the model gets the link (web_fetch can read it).
 */
function imageNote(url: string, param: string): string {
  if (!/^https?:\/\//i.test(url)) throw badRequest('Only http(s) image URLs are supported (no inline data: images).', param, 'invalid_image_url');
  return `[Image: ${url}]`;
}

/**
 * Splits what the client said into its instructions, the history before the new message (alternating, as the
 * store keeps it: consecutive messages of one role are joined) and the new user message, which must come last.
 */
function conversation(said: Said[], param: string): Pick<ApiInput, 'system' | 'history' | 'text' | 'attachments'> {
  const system = said
    .filter((s) => s.role === 'system')
    .map((s) => s.text)
    .filter((t) => t.trim() !== '');
  const turns = said.filter((s) => s.role !== 'system');
  const last = turns[turns.length - 1];
  if (last?.role !== 'user') throw badRequest('The last message must be a user message: it is what Herald answers.', param);
  if (last.text.trim() === '' && last.attachments.length === 0) throw badRequest('The last user message is empty.', param);
  if (last.text.length > MAX_INBOUND_CHARS) {
    throw badRequest(
      `The last user message is too long (${last.text.length} characters; the limit is ${MAX_INBOUND_CHARS}).`,
      param,
      'string_above_max_length',
    );
  }
  const history: ChatMessage[] = [];
  for (const t of turns.slice(0, -1)) {
    if (t.text.trim() === '') continue;
    const prev = history[history.length - 1];
    if (prev && prev.role === t.role) prev.content = `${prev.content ?? ''}\n\n${t.text}`;
    else history.push({ role: t.role, content: t.text });
  }
  // Two user messages in a row at the end: the earlier one is part of the new message.
  let text = last.text;
  if (history.length > 0 && history[history.length - 1].role === 'user') text = `${history.pop()!.content ?? ''}\n\n${text}`;
  return { system: system.length ? system.join('\n\n') : null, history, text, attachments: last.attachments };
}

function sessionOf(headers: Record<string, unknown>, user: string | null | undefined): Pick<ApiInput, 'session' | 'user'> {
  const header = headers[SESSION_HEADER];
  const fromHeader = typeof header === 'string' ? header.trim() : Array.isArray(header) ? String(header[0]).trim() : '';
  const fromUser = user?.trim() || null;
  // `user` is the session's user id even when the header names the session: both are ids, checked alike.
  for (const [value, param] of [
    [fromHeader, SESSION_HEADER],
    [fromUser, 'user'],
  ] as const) {
    if (value && (value.length > MAX_SESSION_NAME || /[\u0000-\u001f\u007f]/.test(value))) {
      throw badRequest(`The session name (X-Herald-Session or user) must be 1-${MAX_SESSION_NAME} characters without control characters.`, param);
    }
  }
  return { session: fromHeader || fromUser, user: fromUser };
}
