/**
 * Internal (OpenAI-style) history → Anthropic Messages request parts. The rules that bite: tool results live
 * in *user* messages as `tool_result` blocks, must come first in that message, and roles must alternate, so
 * consecutive tool results and a following user text are merged into one user message.
 */
import type {
  ImageBlockParam,
  MessageParam,
  RedactedThinkingBlockParam,
  TextBlockParam,
  ThinkingBlockParam,
  Tool,
  ToolResultBlockParam,
  ToolUseBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import { recordOr } from '../base/json-values.js';
import type { ChatMessage, ImageInput, ToolCall } from '../base/types.js';
import { ANTHROPIC_REASONING_FORMAT } from './anthropic-stream.js';
import { planCacheBreakpoints } from './cache-breakpoints.js';
import { toolImages, toolResultText } from './tool-images.js';
import { splitSystemPrompt } from './system-prompt.js';
import type { ToolSchema } from './types.js';

const EPHEMERAL = { type: 'ephemeral' } as const;

type Block = TextBlockParam | ImageBlockParam | ToolUseBlockParam | ToolResultBlockParam | ThinkingBlockParam | RedactedThinkingBlockParam;
/** The image types the Messages API takes. */
const ANTHROPIC_IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;
type AnthropicImageType = (typeof ANTHROPIC_IMAGE_TYPES)[number];
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

/**
 * System blocks and messages with the cache breakpoints of the shared plan (cache-breakpoints.ts): the last
 * turn, the end of the latest user text when per-request parts follow it, the session's system prompt and its
 * static prefix (the message before the last when there is room). Stray system messages in the history follow the
 * system prompt, uncached.
 */
export function toAnthropicRequest(
  systemPrompt: string,
  history: ChatMessage[],
  vision = true,
  thinking = false,
): { system: TextBlockParam[]; messages: MessageParam[] } {
  const parts = splitSystemPrompt(systemPrompt);
  const { turns: messages, ownText } = buildTurns(history, vision, thinking);
  const ownTextOf = ownText ? messages.findIndex((m) => (m.content as Block[]).includes(ownText)) : -1;
  const plan = planCacheBreakpoints({ systemBlocks: parts.length, messages: messages.length, ...(ownTextOf >= 0 ? { ownTextOf } : {}) });
  const system: TextBlockParam[] = parts.map((text, i) => ({ type: 'text', text, ...(plan.system.includes(i) ? { cache_control: EPHEMERAL } : {}) }));
  for (const m of history) if (m.role === 'system') system.push(...textBlocks(m.content));
  const mark = (content: Block[], at: number): void => {
    const block = content[at];
    // Thinking blocks cannot carry cache_control.
    if (block && block.type !== 'thinking' && block.type !== 'redacted_thinking') content[at] = { ...block, cache_control: EPHEMERAL };
  };
  if (plan.ownTextOf !== undefined && ownText) {
    const content = messages[plan.ownTextOf].content as Block[];
    mark(content, content.indexOf(ownText));
  }
  for (const i of plan.messages) {
    const content = messages[i].content as Block[];
    mark(content, content.length - 1);
  }
  return { system, messages };
}

/**
 * `vision` false leaves images out (their text notes in the content stay). `thinking` (extended thinking is on)
 * puts each assistant message's thinking blocks back in front of it, unmodified, as the API requires in a tool loop.
 */
export function toAnthropicMessages(messages: ChatMessage[], vision = true, thinking = false): MessageParam[] {
  return buildTurns(messages, vision, thinking).turns;
}

/**
 * The turns, and the latest user message's own text block when per-request parts follow it (the saved notes after
 * `requestContextAt`, the turn's images): the one block of that message the next turn sends the same.
 */
function buildTurns(messages: ChatMessage[], vision: boolean, thinking: boolean): { turns: Turn[]; ownText?: TextBlockParam } {
  const turns: Turn[] = [];
  let ownText: TextBlockParam | undefined;
  const push = (role: Turn['role'], blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: [...blocks] });
  };

  for (const m of messages) {
    switch (m.role) {
      case 'system':
        break; // carried by toAnthropicSystem
      case 'user': {
        const at = m.requestContextAt ?? m.content?.length ?? 0;
        const own = textBlocks(m.content?.slice(0, at) ?? null);
        const images = vision ? imageBlocks(m.images) : [];
        const context = textBlocks(m.content?.slice(at) ?? null);
        ownText = own.length > 0 && images.length + context.length > 0 ? own[0] : undefined;
        // Images after the text, as a person would write "look at this" and attach the picture; the notes last.
        push('user', [...own, ...images, ...context]);
        break;
      }
      case 'tool':
        push('user', [toolResult(m, vision)]);
        break;
      case 'assistant': {
        // Thinking goes back only with its signature, and only when thinking is on (plain reasoning text never does).
        const body: Block[] = [...textBlocks(m.content), ...(m.tool_calls ?? []).map(toToolUse)];
        if (body.length > 0) push('assistant', [...(thinking ? thinkingBlocks(m) : []), ...body]);
        break;
      }
    }
  }
  return { turns, ...(ownText ? { ownText } : {}) };
}

function thinkingBlocks(m: ChatMessage): Block[] {
  return (m.reasoning_details ?? []).flatMap((d): Block[] => {
    if (d.format !== ANTHROPIC_REASONING_FORMAT) return [];
    const { type, thinking, signature, data } = d.data;
    if (type === 'thinking' && typeof thinking === 'string' && typeof signature === 'string' && signature !== '') {
      return [{ type: 'thinking', thinking, signature }];
    }
    if (type === 'redacted_thinking' && typeof data === 'string') return [{ type: 'redacted_thinking', data }];
    return [];
  });
}

export function toAnthropicTool(t: ToolSchema): Tool {
  return { name: t.name, description: t.description, input_schema: { ...t.parameters, type: 'object' } };
}

/** Anthropic rejects empty and whitespace-only text blocks, so those become no block at all. */
function textBlocks(content: string | null): TextBlockParam[] {
  return content && content.trim() !== '' ? [{ type: 'text', text: content }] : [];
}

/** Text as a string; with images it shows, the text block then an image block per image (the API takes both). */
function toolResult(m: ChatMessage, vision: boolean): ToolResultBlockParam {
  const text = toolResultText(m, vision);
  const images = imageBlocks(toolImages(m, vision));
  const content = images.length === 0 ? text : [...textBlocks(text), ...images];
  return { type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content };
}

function imageBlocks(images: ImageInput[] | undefined): ImageBlockParam[] {
  return (images ?? [])
    .filter((img): img is typeof img & { mimeType: AnthropicImageType } => (ANTHROPIC_IMAGE_TYPES as readonly string[]).includes(img.mimeType))
    .map((img) => ({ type: 'image', source: { type: 'base64', media_type: img.mimeType, data: img.data } }));
}

function toToolUse(tc: ToolCall): ToolUseBlockParam {
  return { type: 'tool_use', id: tc.id, name: tc.function.name, input: parseToolArguments(tc.function.arguments) };
}

/** `tool_use.input` must be an object; arguments the model garbled are sent as `{}` rather than failing the turn. */
export function parseToolArguments(args: string): Record<string, unknown> {
  try {
    return recordOr(JSON.parse(args));
  } catch {
    return {};
  }
}
