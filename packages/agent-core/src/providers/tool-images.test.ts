/**
 * Images a tool returned, per wire API: inside the tool result where the API allows it (Anthropic, Bedrock Converse,
 * Responses), in a user message right after the tool results where it does not (Chat Completions), and a note
 * instead for a model without vision. Later turns (no images on the message) send the text alone.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { estimateMessagesTokens, IMAGE_TOKENS } from '../compression/tokens.js';
import { pruneOldToolOutputs, PRUNED_TOOL_OUTPUT } from '../compression/prune.js';
import { toAnthropicMessages } from './anthropic-convert.js';
import { toConverseRequest } from './bedrock-convert.js';
import { toChatMessages } from './openai.js';
import { toResponsesInput } from './responses-convert.js';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const NOTE = '[image 1: image/png, 70 bytes; shown with this result only, not kept in the conversation history]';
const dataUrl = `data:image/png;base64,${png}`;

const asked: ChatMessage = { role: 'user', content: 'take a screenshot' };
const calls: ChatMessage = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'web__screenshot', arguments: '{}' } },
    { id: 'call_2', type: 'function', function: { name: 'web__echo', arguments: '{}' } },
  ],
};
const shot: ChatMessage = {
  role: 'tool',
  tool_call_id: 'call_1',
  tool_name: 'web__screenshot',
  content: `the page\n\n${NOTE}`,
  images: [{ mimeType: 'image/png', data: png }],
};
const echo: ChatMessage = { role: 'tool', tool_call_id: 'call_2', tool_name: 'web__echo', content: 'echoed' };
const turn = [asked, calls, shot, echo];
const noVisionText = `the page\n\n${NOTE}\n\n[image returned by tool web__screenshot, not shown: model has no vision]`;
/** The same turn as a later one reads it from the store: no image bytes. */
const stored = turn.map(({ images: _images, ...m }) => m);

describe('images returned by a tool', () => {
  it('Chat Completions: tool messages stay text; one user message after the run of results shows the images, naming the call', () => {
    const out = toChatMessages('', turn);
    expect(out.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: `the page\n\n${NOTE}` },
      { role: 'tool', tool_call_id: 'call_2', content: 'echoed' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The image returned by tool call call_1 (web__screenshot), in the order its result lists them:' },
          { type: 'image_url', image_url: { url: dataUrl } },
        ],
      },
    ]);
    // Without vision, or in a later turn, nothing is added.
    const blind = toChatMessages('', turn, false);
    expect(blind).toHaveLength(4);
    expect(blind[2]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: noVisionText });
    expect(toChatMessages('', stored)).toHaveLength(4);
  });

  it('Anthropic: the tool_result holds a text block then an image block', () => {
    const [, , results] = toAnthropicMessages(turn);
    expect(results).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          content: [
            { type: 'text', text: `the page\n\n${NOTE}` },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          ],
        },
        { type: 'tool_result', tool_use_id: 'call_2', content: 'echoed' },
      ],
    });
    expect(toAnthropicMessages(turn, false)[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_1', content: noVisionText },
      { type: 'tool_result', tool_use_id: 'call_2', content: 'echoed' },
    ]);
    expect((toAnthropicMessages(stored)[2].content as Array<{ content: unknown }>)[0].content).toBe(`the page\n\n${NOTE}`);
  });

  it('Bedrock Converse: the toolResult content holds the text then an image block with the bytes', () => {
    const { messages } = toConverseRequest('', turn, false);
    expect(messages[2].content?.[0]).toEqual({
      toolResult: {
        toolUseId: 'call_1',
        content: [{ text: `the page\n\n${NOTE}` }, { image: { format: 'png', source: { bytes: new Uint8Array(Buffer.from(png, 'base64')) } } }],
      },
    });
    expect(toConverseRequest('', turn, false, false).messages[2].content?.[0]).toEqual({
      toolResult: { toolUseId: 'call_1', content: [{ text: noVisionText }] },
    });
  });

  it('Responses: the function_call_output is a list of input_text and input_image', () => {
    const items = toResponsesInput(turn, 'gpt-4.1');
    expect(items.filter((i) => 'type' in i && i.type === 'function_call_output')).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: `the page\n\n${NOTE}` },
          { type: 'input_image', image_url: dataUrl, detail: 'auto' },
        ],
      },
      { type: 'function_call_output', call_id: 'call_2', output: 'echoed' },
    ]);
    expect(toResponsesInput(turn, 'gpt-4.1', false)).toContainEqual({ type: 'function_call_output', call_id: 'call_1', output: noVisionText });
  });

  it("count in token estimates like a user's images, and go when the result is pruned", () => {
    const withImage = estimateMessagesTokens([shot], IMAGE_TOKENS.anthropic);
    const without = estimateMessagesTokens([stored[2]], IMAGE_TOKENS.anthropic);
    expect(withImage - without).toBe(IMAGE_TOKENS.anthropic);
    const long: ChatMessage = { ...shot, content: 'x'.repeat(500) };
    const [pruned] = pruneOldToolOutputs([long], 1).messages;
    expect(pruned).toEqual({ role: 'tool', tool_call_id: 'call_1', tool_name: 'web__screenshot', content: PRUNED_TOOL_OUTPUT });
  });
});
