/**
 * Images in every wire API: a user message's images go after its text in each provider's own shape, and a model
 * without vision gets the text (with its image notes) only.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { toConverseRequest } from './bedrock-convert.js';
import { supportsVision } from './models.js';
import { toResponsesInput } from './responses-convert.js';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const asked: ChatMessage = { role: 'user', content: 'what is this?\n[Image: dot.png]', images: [{ mimeType: 'image/png', data: png }] };

describe('images per wire API', () => {
  it('Responses: input_text then input_image with a data URL', () => {
    expect(toResponsesInput([asked], 'gpt-4.1')).toEqual([
      {
        role: 'user',
        content: [
          { type: 'input_text', text: 'what is this?\n[Image: dot.png]' },
          { type: 'input_image', image_url: `data:image/png;base64,${png}`, detail: 'auto' },
        ],
      },
    ]);
    expect(toResponsesInput([asked], 'gpt-4.1', false)).toEqual([{ role: 'user', content: 'what is this?\n[Image: dot.png]' }]);
  });

  it('Bedrock Converse: a text block then an image block with the raw bytes and the format name', () => {
    const { messages } = toConverseRequest('', [asked], false);
    expect(messages[0].content).toEqual([
      { text: 'what is this?\n[Image: dot.png]' },
      { image: { format: 'png', source: { bytes: new Uint8Array(Buffer.from(png, 'base64')) } } },
    ]);
    expect(toConverseRequest('', [asked], false, false).messages[0].content).toEqual([{ text: 'what is this?\n[Image: dot.png]' }]);
  });
});

describe('supportsVision', () => {
  it('knows the families by name, snapshots, OpenRouter and Bedrock ids, and lets overrides win', () => {
    expect(
      ['gpt-4.1-mini', 'gpt-4o-2024-08-06', 'claude-sonnet-4-5', 'anthropic/claude-sonnet-4.5', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'].map((m) =>
        supportsVision(m),
      ),
    ).toEqual([true, true, true, true, true]);
    expect(['gpt-3.5-turbo', 'o3-mini', 'llava:13b', 'some-local-model'].map((m) => supportsVision(m))).toEqual([false, false, false, false]);
    expect(supportsVision('llava:13b', { llava: true })).toBe(true);
    expect(supportsVision('gpt-4o-mini', { 'gpt-4o': false, 'gpt-4o-mini': true })).toBe(true);
    expect(supportsVision('gpt-4o', { 'gpt-4o': false })).toBe(false);
  });
});
