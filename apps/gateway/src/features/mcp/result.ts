/**
 * An MCP tool result as the agent's tool output: text, plus the images the model is to see. Text blocks are passed
 * on whole and embedded text resources up to the media character limit; each image is checked (a JPEG, PNG, GIF or
 * WebP by its bytes, under the per-image byte cap, within the images-per-message and bytes-per-message caps, the
 * same limits as files users send) and named in the text where it sits, so the history, which never keeps image
 * bytes, still says what was there. An image that fails a check, audio, binary resources and resource links become
 * a short note. The loop's own limit (MAX_TOOL_RESULT_CHARS) then cuts text that is too long, as for every tool;
 * each provider shows the images (or, to a model without vision, a note) in its own way.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ImageInput, ToolOutput } from '@herald/agent-core';
import { sniffImageType } from '../media/classify.js';

/** A result the server marked `isError`: the agent sees it as a failed tool call. */
export class McpToolError extends Error {
  override name = 'McpToolError';
}

/** The caps a result's images and embedded text are held to (the media limits, HERALD_MEDIA_MAX_*). */
export interface McpResultLimits {
  maxImageBytes: number;
  maxImages: number;
  maxMessageBytes: number;
  maxChars: number;
}

/** Bytes a base64 string decodes to. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The images taken so far from one result, against its caps. */
interface ImageBudget {
  /** An error result is only text (a tool error): its images are named, not shown. */
  error: boolean;
  /** Image blocks met so far, shown or not: they are numbered in the order the server sent them. */
  seen: number;
  images: ImageInput[];
  bytes: number;
}

function imageText(block: { data: string; mimeType: string }, limits: McpResultLimits, budget: ImageBudget): string {
  const n = ++budget.seen;
  const bytes = decodedBytes(block.data);
  const head = `image ${n}: ${block.mimeType}, ${size(bytes)}`;
  const declined = (why: string): string => `[${head}; not shown: ${why}]`;
  if (budget.error) return declined('the tool reported an error');
  if (budget.images.length >= limits.maxImages) return declined(`only ${limits.maxImages} images are shown per tool result`);
  if (bytes > limits.maxImageBytes) return declined(`larger than the ${size(limits.maxImageBytes)} limit per image`);
  if (budget.bytes + bytes > limits.maxMessageBytes) return declined(`the result's images together pass the ${size(limits.maxMessageBytes)} limit`);
  // What the bytes are, not what the server called them: providers refuse a mismatch.
  const mimeType = sniffImageType(Buffer.from(block.data.slice(0, 64), 'base64'));
  if (!mimeType) return declined('not a JPEG, PNG, GIF or WebP image');
  budget.images.push({ mimeType, data: block.data, name: `image ${n}` });
  budget.bytes += bytes;
  // Read with the image during this turn, and alone in later ones (the bytes are not kept).
  return `[image ${n}: ${mimeType}, ${size(bytes)}; shown with this result only, not kept in the conversation history]`;
}

function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[cut: ${text.length - maxChars} more characters of this resource not shown]`;
}

function blockText(block: ContentBlock, limits: McpResultLimits, budget: ImageBudget): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return imageText(block, limits, budget);
    case 'audio':
      return `[audio: ${block.mimeType}, ${size(decodedBytes(block.data))}; not shown to the model]`;
    case 'resource_link': {
      const details = [block.mimeType, block.size === undefined ? undefined : size(block.size)].filter(Boolean).join(', ');
      const head = `[resource link: ${block.name} <${block.uri}>${details ? ` (${details})` : ''}]`;
      return block.description ? `${head}\n${block.description}` : head;
    }
    case 'resource': {
      const r = block.resource;
      if ('text' in r) return `[resource <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}]\n${clip(r.text, limits.maxChars)}`;
      return `[resource <${r.uri}>: ${r.mimeType ?? 'binary'}, ${size(decodedBytes(r.blob))}; not shown to the model]`;
    }
    default:
      return `[${(block as { type: string }).type} content not shown to the model]`;
  }
}

/** What the agent gets; throws McpToolError for a result the server marked as an error. */
export function toolOutputOf(result: CallToolResult, limits: McpResultLimits): ToolOutput {
  const budget: ImageBudget = { error: result.isError === true, seen: 0, images: [], bytes: 0 };
  const blocks = result.content ?? [];
  let text = blocks.map((b) => blockText(b, limits, budget)).join('\n\n');
  // A server that answers only with structured content (outputSchema) still has something to say.
  if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (result.isError === true) throw new McpToolError(text || 'the tool reported an error');
  const content = text || '(the tool returned nothing)';
  return budget.images.length > 0 ? { content, images: budget.images } : { content };
}
