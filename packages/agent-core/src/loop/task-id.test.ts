/** B1/E9: each run of the loop is a task with an id of its own, given to every tool so per-task state stays apart. */
import { describe, expect, it } from 'vitest';
import { createDelegateTool } from '../builtins/delegate-task.js';
import type { Tool, ToolContext } from '../tools/registry.js';
import { IterationBudget } from './budget.js';
import { runConversation } from './run-conversation.js';
import { ScriptedProvider } from './scripted-provider.js';

/** A stateful tool in Hermes' manner: a scratch list kept per task id. */
function scratchTool(): { tool: Tool; seen: (string | undefined)[] } {
  const lists = new Map<string, string[]>();
  const seen: (string | undefined)[] = [];
  const tool: Tool = {
    name: 'note',
    description: 'Add a note to the scratch list and read it back',
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
    readOnly: true,
    execute: async (args, ctx: ToolContext) => {
      seen.push(ctx.taskId);
      const list = lists.get(ctx.taskId ?? '') ?? [];
      list.push(String(args.text));
      lists.set(ctx.taskId ?? '', list);
      return list.join(', ');
    },
  };
  return { tool, seen };
}

const noteCalls = (...texts: string[]) => ({ toolCalls: texts.map((text) => ({ name: 'note', arguments: JSON.stringify({ text }) })) });

describe('the task id of a run', () => {
  it('is the same for every tool call of a turn, another for another turn, so two turns at once keep their state apart', async () => {
    const { tool, seen } = scratchTool();
    const turn = (who: string, toolContext: Record<string, unknown> = {}) =>
      runConversation({
        userMessage: who,
        history: [],
        systemPrompt: 's',
        provider: new ScriptedProvider().script(noteCalls(`${who}-1`), noteCalls(`${who}-2`), { text: 'done' }),
        tools: [tool],
        toolContext,
      });
    // A task id slipped into the caller's context does not win over the run's own.
    const [a, b] = await Promise.all([turn('a', { taskId: 'shared' }), turn('b', { taskId: 'shared' })]);

    const results = (r: typeof a) => r.newMessages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results(a)).toEqual(['a-1', 'a-1, a-2']);
    expect(results(b)).toEqual(['b-1', 'b-1, b-2']);
    expect(a.taskId).toBeTruthy();
    expect(a.taskId).not.toBe(b.taskId);
    expect(new Set(seen)).toEqual(new Set([a.taskId, b.taskId]));
  });

  it('can be given by the caller, and a subagent works under a task id of its own', async () => {
    const { tool, seen } = scratchTool();
    const provider = new ScriptedProvider().script(
      {
        toolCalls: [
          { name: 'note', arguments: '{"text":"parent"}' },
          { name: 'delegate_task', arguments: '{"task":"child work"}' },
        ],
      },
      noteCalls('child'),
      { text: 'child done' },
      { text: 'all done' },
    );
    const delegate = createDelegateTool({ provider, parentTools: () => [tool] });
    const budget = new IterationBudget(10);
    const r = await runConversation({
      userMessage: 'go',
      history: [],
      systemPrompt: 's',
      provider,
      tools: [tool, delegate],
      budget,
      toolContext: { budget },
      taskId: 'task-42',
    });

    expect(r.taskId).toBe('task-42');
    expect(seen[0]).toBe('task-42');
    expect(seen[1]).toBeTruthy();
    expect(seen[1]).not.toBe('task-42');
    // The child's scratch list did not start with the parent's note.
    expect(r.newMessages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['parent', 'child done']);
  });
});
