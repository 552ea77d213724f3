import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../base/types.js';
import type { Tool } from '../tools/registry.js';
import { createDelegateTool } from '../builtins/delegate-task.js';
import { IterationBudget } from './budget.js';
import { CANCELLED_RESULT, executeToolCalls, prepareToolCalls } from './execute-tools.js';
import { ScriptedProvider } from './scripted-provider.js';
import type { ToolCallOutcome, ToolHook } from './tool-hooks.js';
import type { AgentEvent } from './types.js';

const call = (id: string, name: string, args: Record<string, unknown> = {}): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

function counted(name: string, extra: Partial<Tool> = {}): Tool & { runs: Array<Record<string, unknown>> } {
  const runs: Array<Record<string, unknown>> = [];
  return {
    name,
    description: name,
    parameters: { type: 'object' },
    readOnly: false,
    runs,
    async execute(args) {
      runs.push(args);
      return `${name} ran`;
    },
    ...extra,
  };
}

async function runBatch(calls: ToolCall[], tools: Tool[], hooks: ToolHook[], signal = new AbortController().signal) {
  const events: AgentEvent[] = [];
  const batch = prepareToolCalls(calls, new Map(tools.map((t) => [t.name, t])));
  const messages = await executeToolCalls(batch, { signal, emit: (e) => events.push(e), hooks, toolContext: { sessionId: 's1' } });
  return { messages, events };
}

describe('tool hooks', () => {
  it('a before-hook that denies keeps the tool from running and its text becomes the result; after-hooks see both', async () => {
    const deploy = counted('deploy');
    const lookup = counted('lookup');
    const seen: Array<[string, ToolCallOutcome]> = [];
    const order: string[] = [];
    const hooks: ToolHook[] = [
      {
        name: 'first',
        before: async (c) => {
          order.push(`first:${c.name}:${String(c.context.sessionId)}`);
          return c.name === 'deploy' ? { action: 'deny', result: 'Not approved.' } : { action: 'allow' };
        },
        after: async (c, outcome) => void seen.push([c.name, outcome]),
      },
      { name: 'second', before: async (c) => (order.push(`second:${c.name}`), { action: 'allow' }) },
    ];
    const { messages } = await runBatch([call('1', 'deploy', { env: 'prod' }), call('2', 'lookup')], [deploy, lookup], hooks);
    expect(messages.map((m) => m.content)).toEqual(['Not approved.', 'lookup ran']);
    expect(deploy.runs).toEqual([]);
    expect(lookup.runs).toHaveLength(1);
    // The denial ends the list: the second hook is not asked about deploy.
    expect(order).toEqual(['first:deploy:s1', 'first:lookup:s1', 'second:lookup']);
    expect(seen.map(([n, o]) => [n, o.ran, o.ok, o.content])).toEqual([
      ['deploy', false, false, 'Not approved.'],
      ['lookup', true, true, 'lookup ran'],
    ]);
  });

  it('a paused before-hook holds the call until it decides; an interrupt while paused cancels it', async () => {
    const deploy = counted('deploy');
    let release!: () => void;
    const decided = new Promise<void>((r) => (release = r));
    let paused!: () => void;
    const isPaused = new Promise<void>((r) => (paused = r));
    const hook: ToolHook = {
      name: 'approval',
      before: async () => {
        paused();
        await decided;
        return { action: 'allow' };
      },
    };
    const pending = runBatch([call('1', 'deploy')], [deploy], [hook]);
    await isPaused;
    expect(deploy.runs).toEqual([]);
    release();
    expect((await pending).messages[0].content).toBe('deploy ran');

    const controller = new AbortController();
    const waiting: ToolHook = {
      name: 'approval',
      before: (c) =>
        new Promise((_, reject) => {
          c.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
          controller.abort();
        }),
    };
    const cancelled = await runBatch([call('1', 'deploy')], [deploy], [waiting], controller.signal);
    expect(cancelled.messages[0].content).toBe(CANCELLED_RESULT);
    expect(deploy.runs).toHaveLength(1);
  });

  it('a before-hook that throws denies the call; an after-hook that throws is a status, not a failed turn', async () => {
    const deploy = counted('deploy');
    const broken: ToolHook = {
      name: 'policy',
      before: async () => {
        throw new Error('store down');
      },
    };
    const denied = await runBatch([call('1', 'deploy')], [deploy], [broken]);
    expect(denied.messages[0].content).toBe('Error: deploy was not run: the policy check failed (store down).');
    expect(deploy.runs).toEqual([]);

    const audit: ToolHook = {
      name: 'audit',
      after: async () => {
        throw new Error('disk full');
      },
    };
    const ran = await runBatch([call('1', 'deploy')], [deploy], [audit]);
    expect(ran.messages[0].content).toBe('deploy ran');
    expect(ran.events).toContainEqual({ type: 'status', kind: 'info', message: 'tool hook failed: audit after deploy: disk full' });
  });

  it("a subagent's calls go through its parent's hooks", async () => {
    const lookup = counted('lookup', { readOnly: true });
    const asked: string[] = [];
    const hook: ToolHook = {
      name: 'audit',
      before: async (c) => {
        asked.push(c.name);
        return c.name === 'lookup' ? { action: 'deny', result: 'no lookups today' } : { action: 'allow' };
      },
    };
    const child = new ScriptedProvider().script({ toolCalls: [{ name: 'lookup', arguments: '{}' }] }, { text: 'child done' });
    const delegate = createDelegateTool({ provider: child, parentTools: () => [lookup] });
    const events: AgentEvent[] = [];
    const batch = prepareToolCalls([call('1', 'delegate_task', { task: 'look it up' })], new Map([[delegate.name, delegate]]));
    const messages = await executeToolCalls(batch, {
      signal: new AbortController().signal,
      emit: (e) => events.push(e),
      hooks: [hook],
      toolContext: { budget: new IterationBudget(10) },
    });
    expect(messages[0].content).toBe('child done');
    expect(events.some((e) => e.type === 'tool_end')).toBe(true);
    // The parent's hook saw the delegate call and then the child's lookup, which it refused.
    expect(asked).toEqual(['delegate_task', 'lookup']);
    expect(lookup.runs).toEqual([]);
    expect(child.calls[1].messages.at(-1)?.content).toBe('no lookups today');
  });
});
