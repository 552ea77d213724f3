/**
 * Internal (OpenAI Chat-style) history → Responses API input items. Each assistant message becomes its
 * reasoning items (encrypted, replayed whole: we run stateless with `store: false`), its text as an assistant
 * message, and one `function_call` item per tool call; each tool result a `function_call_output`.
 */
import type { FunctionTool, ResponseFunctionCallOutputItemList, ResponseInputItem } from 'openai/resources/responses/responses';
import type { ChatMessage, ReasoningDetail } from '../base/types.js';
import { dataUrl, toolImages, toolResultText } from './tool-images.js';
import type { ToolSchema } from './types.js';

export const RESPONSES_REASONING_FORMAT = 'openai-responses';

/**
 * `vision` false leaves a user message's images out (their text notes in the content stay); a tool result's images go
 * in its `function_call_output` (whose output may be a list of text and image parts), or a note when not shown.
 */
export function toResponsesInput(messages: ChatMessage[], model: string, vision = true): ResponseInputItem[] {
  const items: ResponseInputItem[] = [];
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        items.push({ role: 'system', content: m.content ?? '' });
        break;
      case 'user':
        if (vision && m.images?.length) {
          items.push({
            role: 'user',
            content: [
              ...(m.content ? [{ type: 'input_text' as const, text: m.content }] : []),
              ...m.images.map((img) => ({ type: 'input_image' as const, image_url: dataUrl(img), detail: 'auto' as const })),
            ],
          });
        } else {
          items.push({ role: 'user', content: m.content ?? '' });
        }
        break;
      case 'tool':
        items.push({ type: 'function_call_output', call_id: m.tool_call_id ?? '', output: functionOutput(m, vision) });
        break;
      case 'assistant':
        items.push(...reasoningItems(m.reasoning_details, model));
        if (m.content) items.push({ role: 'assistant', content: m.content });
        for (const tc of m.tool_calls ?? []) {
          items.push({ type: 'function_call', call_id: tc.id, name: tc.function.name, arguments: tc.function.arguments });
        }
        break;
    }
  }
  return items;
}

/** Text, or (images returned and a model that sees) the text then the images: the API takes both as the output. */
function functionOutput(m: ChatMessage, vision: boolean): string | ResponseFunctionCallOutputItemList {
  const images = toolImages(m, vision);
  const text = toolResultText(m, vision);
  if (images.length === 0) return text;
  return [
    ...(text === '' ? [] : [{ type: 'input_text' as const, text }]),
    ...images.map((img) => ({ type: 'input_image' as const, image_url: dataUrl(img), detail: 'auto' as const })),
  ];
}

/**
 * Reasoning items written by this model, as the API gave them. Another model's encrypted reasoning cannot be
 * read (after a fallback or /model), so it is left out rather than failing the request.
 */
function reasoningItems(details: ReasoningDetail[] | undefined, model: string): ResponseInputItem[] {
  return (details ?? [])
    .filter((d) => d.format === RESPONSES_REASONING_FORMAT && d.model === model && typeof d.data.encrypted_content === 'string')
    .map((d) => ({
      type: 'reasoning' as const,
      id: String(d.data.id),
      summary: Array.isArray(d.data.summary) ? (d.data.summary as { type: 'summary_text'; text: string }[]) : [],
      encrypted_content: d.data.encrypted_content as string,
    }));
}

export function toResponsesTool(t: ToolSchema): FunctionTool {
  return { type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false };
}

/** Models that reason, and so return (and need back) encrypted reasoning items. */
export function isReasoningModel(model: string): boolean {
  const name = model.toLowerCase().replace(/^.*\//, '');
  if (/^gpt-5(\.\d+)?-chat/.test(name)) return false;
  return /^(o\d|gpt-5|codex)/.test(name);
}
