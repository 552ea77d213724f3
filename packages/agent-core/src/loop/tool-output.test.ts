/**
 * A tool that returns images (ToolOutput): the loop puts them on the tool message, so every later call of the turn
 * shows them, while the text is cut and sanitised like any result.
 */
import { describe, expect, it } from 'vitest';
import type { Tool } from '../tools/registry.js';
import { MAX_TOOL_RESULT_CHARS } from './execute-tools.js';
import { runConversation } from './run-conversation.js';
import { ScriptedProvider } from './scripted-provider.js';

const image = { mimeType: 'image/png', data: 'iVBORw0KGgo=' };

function screenshot(content: string): Tool {
  return {
    name: 'screenshot',
    description: 'Takes a screenshot',
    parameters: { type: 'object' },
    readOnly: true,
    execute: async () => ({ content, images: [image] }),
  };
}

describe('tool output with images', () => {
  it('reaches the next calls on the tool message; its text is held to the result limit', async () => {
    const provider = new ScriptedProvider().script(
      { toolCalls: [{ id: 'c1', name: 'screenshot', arguments: '{}' }] },
      { toolCalls: [{ id: 'c2', name: 'screenshot', arguments: '{"again":true}' }] },
      { text: 'I see a dot' },
    );
    const long = 'y'.repeat(MAX_TOOL_RESULT_CHARS + 10);
    const result = await runConversation({ userMessage: 'look', history: [], systemPrompt: '', provider, tools: [screenshot(long)] });
    expect(result.finalResponse).toBe('I see a dot');
    const [, second, third] = provider.calls;
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1', images: [image] });
    expect(second.messages.at(-1)?.content).toMatch(/\[truncated: 10 more characters not shown\]$/);
    // Both results keep their images for the rest of the turn.
    expect(third.messages.filter((m) => m.role === 'tool').map((m) => m.images)).toEqual([[image], [image]]);
  });
});
