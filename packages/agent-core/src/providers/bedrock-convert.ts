/**
 * Internal history → Bedrock Converse request parts. Converse has Anthropic's rules under other names: tool
 * results are `toolResult` blocks in a *user* message, roles alternate (so tool results and a following user
 * text merge into one message), empty text blocks are refused. Prompt caching is a `cachePoint` block after the
 * cached content, placed by the shared plan (cache-breakpoints.ts) for models that support it.
 */
import type { ContentBlock, ImageBlock, Message, SystemContentBlock, Tool, ToolResultContentBlock } from '@aws-sdk/client-bedrock-runtime';
import type { ChatMessage, ImageInput, ToolCall } from '../base/types.js';
import { parseToolArguments } from './anthropic-convert.js';
import { BEDROCK_REASONING_FORMAT } from './bedrock-stream.js';
import { planCacheBreakpoints } from './cache-breakpoints.js';
import { splitSystemPrompt } from './system-prompt.js';
import { toolImages, toolResultText } from './tool-images.js';
import type { ToolSchema } from './types.js';

const CACHE_POINT = { cachePoint: { type: 'default' as const } };

export interface ConverseParts {
  system: SystemContentBlock[];
  messages: Message[];
}

/** Claude and Nova models on Bedrock take cachePoint blocks; others reject them. */
export function supportsCachePoints(modelId: string): boolean {
  return /anthropic|claude|amazon\.nova/i.test(modelId);
}

/**
 * `vision` false leaves a user message's images out (their text notes in the content stay). `thinking` (extended
 * thinking is on) puts each assistant message's signed reasoning back in front of it, as Claude requires in a tool loop.
 */
export function toConverseRequest(systemPrompt: string, history: ChatMessage[], cache: boolean, vision = true, thinking = false): ConverseParts {
  const parts = splitSystemPrompt(systemPrompt);
  const { messages, ownText } = toConverseMessages(history, vision, thinking);
  const ownTextOf = ownText ? messages.findIndex((m) => m.content?.includes(ownText)) : -1;
  const layout = { systemBlocks: parts.length, messages: messages.length, ...(ownTextOf >= 0 ? { ownTextOf } : {}) };
  const plan = cache ? planCacheBreakpoints(layout) : { system: [], messages: [] };
  const system: SystemContentBlock[] = [];
  parts.forEach((text, i) => {
    system.push({ text });
    if (plan.system.includes(i)) system.push(CACHE_POINT);
  });
  for (const m of history) if (m.role === 'system' && m.content?.trim()) system.push({ text: m.content });
  for (const i of plan.messages) messages[i].content?.push(CACHE_POINT);
  // After the latest user text, before the notes and images that follow it this turn only (cache-breakpoints.ts).
  if (plan.ownTextOf !== undefined && ownText) {
    const content = messages[plan.ownTextOf].content;
    content?.splice(content.indexOf(ownText) + 1, 0, CACHE_POINT);
  }
  return { system, messages };
}

/** The messages, and the latest user message's own text block when per-request parts follow it. */
function toConverseMessages(history: ChatMessage[], vision: boolean, thinking: boolean): { messages: Message[]; ownText?: ContentBlock } {
  const out: Message[] = [];
  let ownText: ContentBlock | undefined;
  const push = (role: 'user' | 'assistant', blocks: ContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    if (last?.role === role) last.content?.push(...blocks);
    else out.push({ role, content: [...blocks] });
  };
  for (const m of history) {
    switch (m.role) {
      case 'system':
        break; // carried in `system`
      case 'user': {
        const at = m.requestContextAt ?? m.content?.length ?? 0;
        const own = textBlocks(m.content?.slice(0, at) ?? null);
        const images: ContentBlock[] = vision ? converseImages(m.images).map((image) => ({ image })) : [];
        const context = textBlocks(m.content?.slice(at) ?? null);
        ownText = own.length > 0 && images.length + context.length > 0 ? own[0] : undefined;
        push('user', [...own, ...images, ...context]);
        break;
      }
      case 'tool':
        push('user', [{ toolResult: { toolUseId: m.tool_call_id ?? '', content: toolResultContent(m, vision) } }]);
        break;
      case 'assistant': {
        const body = [...textBlocks(m.content), ...(m.tool_calls ?? []).map(toToolUse)];
        if (body.length > 0) push('assistant', [...(thinking ? reasoningBlocks(m) : []), ...body]);
        break;
      }
    }
  }
  return { messages: out, ...(ownText ? { ownText } : {}) };
}

function reasoningBlocks(m: ChatMessage): ContentBlock[] {
  return (m.reasoning_details ?? []).flatMap((d): ContentBlock[] => {
    if (d.format !== BEDROCK_REASONING_FORMAT) return [];
    const { text, signature, redacted } = d.data;
    if (typeof redacted === 'string') return [{ reasoningContent: { redactedContent: new Uint8Array(Buffer.from(redacted, 'base64')) } }];
    if (typeof text === 'string' && typeof signature === 'string' && signature !== '') return [{ reasoningContent: { reasoningText: { text, signature } } }];
    return [];
  });
}

export function toConverseTool(t: ToolSchema): Tool {
  // The SDK types the schema as a DocumentType; our JSON Schema is one.
  return { toolSpec: { name: t.name, description: t.description, inputSchema: { json: { ...t.parameters, type: 'object' } as never } } };
}

function textBlocks(content: string | null): ContentBlock[] {
  return content && content.trim() !== '' ? [{ text: content }] : [];
}

/** The text (Converse refuses an empty one), then an image block per image shown: toolResult content takes both. */
function toolResultContent(m: ChatMessage, vision: boolean): ToolResultContentBlock[] {
  return [{ text: toolResultText(m, vision) || '(empty)' }, ...converseImages(toolImages(m, vision)).map((image) => ({ image }))];
}

/** Converse names the format (`png`) instead of a MIME type, and takes the raw bytes. */
function converseImages(images: ImageInput[] | undefined): ImageBlock[] {
  const formats: Record<string, 'png' | 'jpeg' | 'gif' | 'webp'> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
  return (images ?? []).flatMap((img) => {
    const format = formats[img.mimeType];
    return format ? [{ format, source: { bytes: new Uint8Array(Buffer.from(img.data, 'base64')) } }] : [];
  });
}

function toToolUse(tc: ToolCall): ContentBlock {
  return { toolUse: { toolUseId: tc.id, name: tc.function.name, input: parseToolArguments(tc.function.arguments) as never } };
}
