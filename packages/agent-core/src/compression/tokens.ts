/**
 * Token accounting for compression decisions. The API's reported prompt size is the truth when we have it; before
 * the first call (or for a history at rest) characters / 4 is the estimate Hermes uses, close enough to decide
 * "is it time to compress" without shipping a tokenizer per model.
 */
import type { ChatMessage } from '../base/types.js';
import type { ApiMode, ToolSchema } from '../providers/types.js';

export const CHARS_PER_TOKEN = 4;
/** Role, separators and ids cost tokens too; a flat allowance per message keeps many tiny messages honest. */
const MESSAGE_OVERHEAD_CHARS = 16;

/**
 * What one image costs, fixed per provider rather than measured: OpenAI bills a 1024×1024 image at high detail
 * as 765 tokens (85 + 4 tiles × 170); Anthropic about width × height / 750, up to ~1,600 for the 1.15-megapixel
 * size it scales pictures down to. Larger pictures are scaled by the provider, so these are close to the ceiling.
 */
export const IMAGE_TOKENS = { openai: 765, anthropic: 1600 } as const;
/** When the provider is not known: the larger estimate, so the threshold errs on the side of compressing. */
export const DEFAULT_IMAGE_TOKENS = Math.max(...Object.values(IMAGE_TOKENS));

/** By wire API: OpenAI's two APIs bill images alike; Claude is Claude directly or through Bedrock. */
export function imageTokensFor(apiMode: ApiMode | undefined): number {
  switch (apiMode) {
    case 'chat_completions':
    case 'responses':
      return IMAGE_TOKENS.openai;
    case 'anthropic_messages':
    case 'bedrock_converse':
      return IMAGE_TOKENS.anthropic;
    default:
      return DEFAULT_IMAGE_TOKENS;
  }
}

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/**
 * Characters a message puts on the wire: text, reasoning, the whole tool-call envelope, and each image it shows
 * (counted as its token estimate in characters; the history keeps no image bytes, only text notes).
 */
function messageChars(m: ChatMessage, imageTokens = DEFAULT_IMAGE_TOKENS): number {
  let chars = MESSAGE_OVERHEAD_CHARS + (m.content?.length ?? 0) + (m.reasoning?.length ?? 0);
  chars += (m.images?.length ?? 0) * imageTokens * CHARS_PER_TOKEN;
  if (m.tool_calls && m.tool_calls.length > 0) chars += JSON.stringify(m.tool_calls).length;
  if (m.tool_call_id) chars += m.tool_call_id.length;
  return chars;
}

export function estimateMessageTokens(m: ChatMessage): number {
  return Math.ceil(messageChars(m) / CHARS_PER_TOKEN);
}

export function estimateMessagesTokens(messages: readonly ChatMessage[], imageTokens = DEFAULT_IMAGE_TOKENS): number {
  let chars = 0;
  for (const m of messages) chars += messageChars(m, imageTokens);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** A whole request: system prompt, messages and the tool schemas (which can be thousands of tokens). */
export function estimateRequestTokens(
  systemPrompt: string,
  messages: readonly ChatMessage[],
  tools: readonly ToolSchema[] = [],
  imageTokens = DEFAULT_IMAGE_TOKENS,
): number {
  let chars = systemPrompt.length + toolsChars(tools);
  for (const m of messages) chars += messageChars(m, imageTokens);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Each schema's JSON length, kept with the schema: the same few schemas go with every call of every turn. */
const schemaChars = new WeakMap<ToolSchema, number>();
/**
 * Each parameters object's JSON length: a tool built per turn (the schedule tool, for the chat it answers) is a new
 * schema every turn but shares its parameters, the bulk of it.
 */
const parametersChars = new WeakMap<object, number>();
/** `{"name":…,"description":…,"parameters":…}` without the three values. */
const SCHEMA_FRAME_CHARS = '{"name":,"description":,"parameters":}'.length;

function schemaLength(t: ToolSchema): number {
  const known = schemaChars.get(t);
  if (known !== undefined) return known;
  const p: unknown = t.parameters;
  let n: number;
  if (typeof t.name === 'string' && typeof t.description === 'string' && typeof p === 'object' && p !== null && Object.keys(t).length === 3) {
    let pn = parametersChars.get(p);
    if (pn === undefined) {
      pn = JSON.stringify(p).length;
      parametersChars.set(p, pn);
    }
    n = SCHEMA_FRAME_CHARS + JSON.stringify(t.name).length + JSON.stringify(t.description).length + pn;
  } else {
    n = JSON.stringify(t).length;
  }
  schemaChars.set(t, n);
  return n;
}

/** `JSON.stringify(tools).length`, without serialising the schemas again on every call. */
export function toolsChars(tools: readonly ToolSchema[]): number {
  if (tools.length === 0) return 0;
  // "[" + the schemas joined by "," + "]"
  let chars = 1 + tools.length;
  for (const t of tools) chars += schemaLength(t);
  return chars;
}
