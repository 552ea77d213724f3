/**
 * Prompt-caching markers on a Chat Completions request, for Claude reached through an OpenAI-compatible router
 * (OpenRouter passes `cache_control` on content parts through to Anthropic). Placement is the shared plan of
 * cache-breakpoints.ts; the system prompt becomes two text parts (static prefix, session part).
 */
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { planCacheBreakpoints } from './cache-breakpoints.js';
import { splitSystemPrompt } from './system-prompt.js';
import type { ChatMessage } from '../base/types.js';
import type { ProviderConfig } from './types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

interface MarkedPart {
  type: 'text';
  text: string;
  cache_control?: typeof EPHEMERAL;
}

/** Explicit setting first; else on for a Claude model behind anything but OpenAI itself. */
export function wantsCacheMarkers(cfg: Pick<ProviderConfig, 'cacheMarkers' | 'model'>, baseURL: string): boolean {
  if (cfg.cacheMarkers !== undefined) return cfg.cacheMarkers;
  return /(^|\/)claude|anthropic\//i.test(cfg.model) && !isOpenAIHost(baseURL);
}

/**
 * The same messages with the system prompt split in two parts and breakpoints placed by the shared plan.
 * `ownText`: the latest user message's own text when the saved notes follow it (`requestContextAt`); that message
 * becomes two parts, the first ending with a breakpoint, so the next turn (without the notes) reads through it.
 */
export function withChatCacheMarkers(systemPrompt: string, messages: ChatCompletionMessageParam[], ownText?: string): ChatCompletionMessageParam[] {
  const hasSystem = systemPrompt !== '' && messages[0]?.role === 'system';
  const history = hasSystem ? messages.slice(1) : [...messages];
  const systemParts = hasSystem ? splitSystemPrompt(systemPrompt) : [];
  const latestUser = history.findLastIndex((m) => m.role === 'user');
  const content = history[latestUser]?.content;
  const splits =
    ownText !== undefined && ownText.trim() !== '' && typeof content === 'string' && content.length > ownText.length && content.startsWith(ownText);
  const plan = planCacheBreakpoints({ systemBlocks: systemParts.length, messages: history.length, ...(splits ? { ownTextOf: latestUser } : {}) });
  if (plan.ownTextOf !== undefined && ownText !== undefined && typeof content === 'string') {
    const parts: MarkedPart[] = [
      { type: 'text', text: ownText, cache_control: EPHEMERAL },
      { type: 'text', text: content.slice(ownText.length) },
    ];
    history[latestUser] = { ...history[latestUser], content: parts } as ChatCompletionMessageParam;
  }

  const out: ChatCompletionMessageParam[] = [];
  if (hasSystem) {
    const parts: MarkedPart[] = systemParts.map((text, i) => ({ type: 'text', text, ...(plan.system.includes(i) ? { cache_control: EPHEMERAL } : {}) }));
    out.push({ role: 'system', content: parts } as ChatCompletionMessageParam);
  }
  for (const [i, m] of history.entries()) out.push(plan.messages.includes(i) ? marked(m) : m);
  return out;
}

/** The latest user message's own text, when per-request context (the saved notes) follows it. */
export function latestOwnText(messages: readonly ChatMessage[]): string | undefined {
  const m = messages.findLast((x) => x.role === 'user');
  return m?.requestContextAt === undefined || m.content === null ? undefined : m.content.slice(0, m.requestContextAt);
}

/**
 * A message whose text ends with a breakpoint: plain text becomes one marked text part; a message that is already
 * parts (text with images) gets the mark on its last text part. One without text (a bare tool call, an image
 * alone) stays as it is.
 */
function marked(m: ChatCompletionMessageParam): ChatCompletionMessageParam {
  if (Array.isArray(m.content)) {
    const parts = m.content as Array<{ type: string }>;
    const last = parts.map((p) => p.type).lastIndexOf('text');
    if (last < 0) return m;
    const content = parts.map((p, i) => (i === last ? { ...p, cache_control: EPHEMERAL } : p));
    return { ...m, content } as ChatCompletionMessageParam;
  }
  if (typeof m.content !== 'string' || m.content === '') return m;
  const parts: MarkedPart[] = [{ type: 'text', text: m.content, cache_control: EPHEMERAL }];
  // cache_control is not in OpenAI's types: the router's extension, passed through at this SDK boundary.
  return { ...m, content: parts } as ChatCompletionMessageParam;
}

export function isOpenAIHost(baseURL: string): boolean {
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}
