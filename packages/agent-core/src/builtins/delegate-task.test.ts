import { describe, expect, it } from 'vitest';
import { IterationBudget } from '../loop/budget.js';
import { BUDGET_SUMMARY_PROMPT, runConversation } from '../loop/run-conversation.js';
import { ScriptedProvider, type RecordedCall } from '../loop/scripted-provider.js';
import type { Tool } from '../tools/registry.js';
import { CHILD_SYSTEM_PROMPT, createDelegateTool } from './delegate-task.js';

function tool(name: string, readOnly: boolean, extra: Partial<Tool> = {}): Tool {
  return { name, description: name, parameters: { type: 'object' }, readOnly, execute: async () => `${name} result`, ...extra };
}

const isChild = (call: RecordedCall) => call.systemPrompt === CHILD_SYSTEM_PROMPT;
const lastText = (call: RecordedCall) => String(call.messages.at(-1)?.content ?? '');

describe('delegate_task tool', () => {
  it('runs children with a fresh context and read-only tools, on the parent budget, at most 3 per turn', async () => {
    const provider = new ScriptedProvider();
    let parentCalls = 0;
    provider.otherwise((call) => {
      if (isChild(call)) {
        // The first child looks something up first (two calls); the others answer at once.
        if (lastText(call).startsWith('task A') && call.messages.length === 1) return { toolCalls: [{ name: 'lookup', arguments: '{}' }] };
        return { text: `answer to ${String(call.messages[0].content).slice(0, 6)}` };
      }
      parentCalls += 1;
      if (parentCalls === 1) {
        return { toolCalls: ['A', 'B', 'C', 'D'].map((t) => ({ name: 'delegate_task', arguments: JSON.stringify({ task: `task ${t}`, context: 'ctx' }) })) };
      }
      return { text: 'all done' };
    });
    const parentTools: Tool[] = [tool('lookup', true), tool('write_file', false), tool('ask', true, { interactive: true })];
    const delegate = createDelegateTool({ provider, parentTools: () => [...parentTools, delegate], maxPerTurn: 3 });
    parentTools.push(delegate);
    const budget = new IterationBudget(20);
    const result = await runConversation({
      userMessage: 'research four things',
      history: [],
      systemPrompt: 'parent',
      provider,
      tools: parentTools,
      budget,
      toolContext: { budget, userId: '7', platform: 'telegram' },
    });

    expect(result.finalResponse).toBe('all done');
    const children = provider.calls.filter(isChild);
    // Fresh context: the child sees only its task, never the parent's conversation.
    expect(children.map((c) => String(c.messages[0].content))).toEqual(expect.arrayContaining(['task A\n\nContext:\nctx']));
    expect(children.every((c) => !JSON.stringify(c.messages).includes('research four things'))).toBe(true);
    // Read-only, non-interactive tools only, and no further delegation.
    expect(children[0].tools.map((t) => t.name)).toEqual(['lookup']);
    const results = result.newMessages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results.slice(0, 3)).toEqual(['answer to task A', 'answer to task B', 'answer to task C']);
    expect(results[3]).toMatch(/^Error: delegate_task failed: at most 3 subagents per request, and this would be number 4/);
    // 2 parent calls + 4 child calls (A took two, B and C one each): all from one budget.
    expect(children).toHaveLength(4);
    expect(budget.consumed).toBe(6);
  });

  it('a child that exhausts the shared budget ends early and says so', async () => {
    // The child keeps looking things up; once the budget is gone the loop asks it to wrap up.
    const provider = new ScriptedProvider().otherwise((call) =>
      lastText(call) === BUDGET_SUMMARY_PROMPT ? { text: 'found half of it' } : { toolCalls: [{ name: 'lookup', arguments: '{}' }] },
    );
    const delegate = createDelegateTool({ provider, parentTools: () => [tool('lookup', true)] });
    const budget = new IterationBudget(3);
    budget.consume(); // the parent's own call
    const signal = new AbortController().signal;
    const out = await delegate.execute({ task: 'loop forever' }, { signal, budget });
    expect(out).toBe('found half of it\n\n[The subagent stopped early: iteration budget exhausted.]');
    expect(budget.remaining).toBe(0);
    await expect(delegate.execute({ task: 'again' }, { signal, budget })).rejects.toThrow(/no steps are left/);
    await expect(delegate.execute({ task: 'x' }, { signal })).rejects.toThrow(/iteration budget is missing/);
  });

  it("a child runs on the turn's own providers when the caller gives them (the session's model, metered there)", async () => {
    const built = new ScriptedProvider().otherwise(() => ({ text: 'from the provider the tools were built with' }));
    const turns = new ScriptedProvider().otherwise(() => ({ text: "from the turn's provider" }));
    const delegate = createDelegateTool({ provider: built, parentTools: () => [] });
    const signal = new AbortController().signal;
    const out = await delegate.execute(
      { task: 'which provider?' },
      { signal, budget: new IterationBudget(5), turnProviders: { primary: turns, fallbacks: [] } },
    );
    expect(out).toBe("from the turn's provider");
    expect(built.calls).toHaveLength(0);
  });

  it('a child has its own iteration cap inside the turn budget, and the per-turn limit is configurable', async () => {
    const provider = new ScriptedProvider().otherwise((call) =>
      lastText(call) === BUDGET_SUMMARY_PROMPT ? { text: 'stopped at my cap' } : { toolCalls: [{ name: 'lookup', arguments: '{}' }] },
    );
    const delegate = createDelegateTool({ provider, parentTools: () => [tool('lookup', true)], maxIterations: 2, maxPerTurn: 1 });
    const budget = new IterationBudget(90);
    const signal = new AbortController().signal;
    const out = await delegate.execute({ task: 'loop forever' }, { signal, budget });
    expect(out).toBe('stopped at my cap\n\n[The subagent stopped early: iteration budget exhausted.]');
    // Two tool rounds of the child (its cap), counted in the turn's budget too.
    expect(budget.consumed).toBe(2);
    await expect(delegate.execute({ task: 'another' }, { signal, budget })).rejects.toThrow(/at most 1 subagents per request/);
  });
});

describe('delegate_task default (E14)', () => {
  it('starts one subagent per turn: a second call in the same reply is answered with an error, not run', async () => {
    const provider = new ScriptedProvider().otherwise((call) => {
      if (isChild(call)) return { text: `done: ${String(call.messages[0].content)}` };
      const parentCalls = provider.calls.filter((c) => !isChild(c)).length;
      return parentCalls === 1
        ? {
            toolCalls: [
              { name: 'delegate_task', arguments: '{"task":"first"}' },
              { name: 'delegate_task', arguments: '{"task":"second"}' },
            ],
          }
        : { text: 'reported' };
    });
    const delegate = createDelegateTool({ provider, parentTools: () => [tool('lookup', true)] });
    const budget = new IterationBudget(10);
    const result = await runConversation({
      userMessage: 'two things',
      history: [],
      systemPrompt: 'parent',
      provider,
      tools: [delegate],
      budget,
      toolContext: { budget },
    });

    expect(provider.calls.filter(isChild)).toHaveLength(1);
    const results = result.newMessages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toBe('done: first');
    expect(results[1]).toMatch(/at most 1 subagents per request, and this would be number 2/);
    expect(result.finalResponse).toBe('reported');
  });
});

describe('IterationBudget.child', () => {
  it('stops at the smaller of its own cap and what the parent has left', () => {
    const parent = new IterationBudget(3);
    const child = parent.child(5);
    expect([child.consume(), child.consume(), child.consume(), child.consume()]).toEqual([true, true, true, false]);
    expect([parent.remaining, child.remaining, child.consumed]).toEqual([0, 0, 3]);
    const capped = new IterationBudget(10).child(1);
    expect([capped.consume(), capped.consume(), capped.remaining]).toEqual([true, false, 0]);
  });
});
