/**
 * An MCP tool result as the agent's tool result: text. Herald's messages are text (the internal format and the
 * store), so text blocks and text resources are passed on whole; images, audio and binary resources are named
 * with their type and size rather than pasted as base64 the model could not see anyway. The loop's own limit
 * (MAX_TOOL_RESULT_CHARS) then cuts what is too long, as for every tool.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';

/** A result the server marked `isError`: the agent sees it as a failed tool call. */
export class McpToolError extends Error {
  override name = 'McpToolError';
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

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
      return `[image: ${block.mimeType}, ${size(decodedBytes(block.data))}; not shown to the model]`;
    case 'audio':
      return `[audio: ${block.mimeType}, ${size(decodedBytes(block.data))}; not shown to the model]`;
    case 'resource_link': {
      const details = [block.mimeType, block.size === undefined ? undefined : size(block.size)].filter(Boolean).join(', ');
      const head = `[resource link: ${block.name} <${block.uri}>${details ? ` (${details})` : ''}]`;
      return block.description ? `${head}\n${block.description}` : head;
    }
    case 'resource': {
      const r = block.resource;
      if ('text' in r) return `[resource <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`;
      return `[resource <${r.uri}>: ${r.mimeType ?? 'binary'}, ${size(decodedBytes(r.blob))}; not shown to the model]`;
    }
    default:
      return `[${(block as { type: string }).type} content not shown to the model]`;
  }
}

/** The text the agent gets; throws McpToolError for a result the server marked as an error. */
export function resultText(result: CallToolResult): string {
  const blocks = result.content ?? [];
  let text = blocks.map(blockText).join('\n\n');
  // A server that answers only with structured content (outputSchema) still has something to say.
  if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (result.isError === true) throw new McpToolError(text || 'the tool reported an error');
  return text || '(the tool returned nothing)';
}
