import { describe, expect, it } from 'vitest';
import { CANCELLED_RESULT } from '../loop/execute-tools.js';
import { runConversation } from '../loop/run-conversation.js';
import { ScriptedProvider } from '../loop/scripted-provider.js';
import type { Tool } from '../tools/registry.js';
import type { ClarifyChannel } from './context.js';
import { createClarifyTool } from './clarify.js';

const signal = new AbortController().signal;

function channel(answer: (question: string) => Promise<string>): ClarifyChannel & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    ask: (question) => {
      asked.push(question);
      return answer(question);
    },
  };
}

describe('clarify tool', () => {
  it('asks through the channel and returns the answer; a number picks one of the offered choices', async () => {
    const tool = createClarifyTool();
    const ch = channel(async () => '2');
    const out = await tool.execute({ question: 'Which city?', choices: ['Lisbon', 'Porto'] }, { signal, clarify: ch });
    expect(ch.asked).toEqual(['Which city?\n\n1. Lisbon\n2. Porto']);
    expect(out).toBe('The user answered: Porto');
    expect(await tool.execute({ question: 'Name?' }, { signal, clarify: channel(async () => '  Ana ') })).toBe('The user answered: Ana');
  });

  it('gives up after the timeout and tells the model to carry on with an assumption', async () => {
    const tool = createClarifyTool({ timeoutMs: 50 });
    const waiting: ClarifyChannel = {
      ask: (_q, s) => new Promise((_, reject) => s.addEventListener('abort', () => reject(s.reason as Error), { once: true })),
    };
    expect(await tool.execute({ question: 'Still there?' }, { signal, clarify: waiting })).toMatch(
      /did not answer within 1 second\. Carry on with your best assumption/,
    );
    await expect(tool.execute({ question: 'x' }, { signal })).rejects.toThrow(/no way to ask the user/);
  });

  it('runs alone in the loop even next to read-only tools, and an interrupt cancels the wait', async () => {
    const order: string[] = [];
    const lookup: Tool = {
      name: 'lookup',
      description: 'l',
      parameters: { type: 'object' },
      readOnly: true,
      execute: async () => {
        order.push('lookup start');
        await new Promise((r) => setTimeout(r, 20));
        order.push('lookup end');
        return 'found';
      },
    };
    const controller = new AbortController();
    // Like the gateway's broker: waits for an answer, and gives up when the turn is aborted.
    const ch: ClarifyChannel = {
      ask: (_q, s) => {
        order.push('asked');
        controller.abort(new Error('user interrupted'));
        return s.aborted ? Promise.reject(s.reason as Error) : new Promise<string>(() => undefined);
      },
    };
    const provider = new ScriptedProvider().script({
      toolCalls: [
        { name: 'lookup', arguments: '{}' },
        { name: 'clarify', arguments: '{"question":"Sure?"}' },
      ],
    });
    const result = await runConversation({
      userMessage: 'go',
      history: [],
      systemPrompt: 's',
      provider,
      tools: [lookup, createClarifyTool()],
      toolContext: { clarify: ch },
      signal: controller.signal,
    });
    expect(order).toEqual(['lookup start', 'lookup end', 'asked']);
    expect(result.interrupted).toBe(true);
    expect(result.newMessages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['found', CANCELLED_RESULT]);
  });
});
