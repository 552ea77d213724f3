/**
 * Images a tool returned (an MCP screenshot), as every wire API takes them. Anthropic, Bedrock Converse and the
 * Responses API carry images inside the tool result itself; Chat Completions takes images only in user messages, so
 * there they follow the tool results in one user message that says which call they came from. A model without
 * vision gets a note in the tool result's text instead. The images are on the tool message only during the turn
 * that ran the tool (never stored): later turns read the content's own description of them.
 */
import type { ChatMessage, ImageInput } from '../base/types.js';

/** The images of a tool result this model is shown: none without vision. */
export function toolImages(m: ChatMessage, vision: boolean): ImageInput[] {
  return vision ? (m.images ?? []) : [];
}

/** A tool result's text: its content, plus a note for the images a model without vision is not shown. */
export function toolResultText(m: ChatMessage, vision: boolean): string {
  const content = m.content ?? '';
  const count = m.images?.length ?? 0;
  if (vision || count === 0) return content;
  const what = count === 1 ? 'image' : `${count} images`;
  const note = `[${what} returned by tool ${m.tool_name ?? 'call'}, not shown: model has no vision]`;
  return content === '' ? note : `${content}\n\n${note}`;
}

/** The text in front of a tool call's images where they cannot be inside its result (Chat Completions). */
export function toolImagesCaption(m: ChatMessage): string {
  const count = m.images?.length ?? 0;
  const what = count === 1 ? 'The image' : `The ${count} images`;
  return `${what} returned by tool call ${m.tool_call_id ?? ''} (${m.tool_name ?? 'tool'}), in the order its result lists them:`;
}

export function dataUrl(img: ImageInput): string {
  return `data:${img.mimeType};base64,${img.data}`;
}
