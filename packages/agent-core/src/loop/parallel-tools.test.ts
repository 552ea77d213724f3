/** E2/E5: tool calls of one reply run side by side when their paths do not overlap, not only when all are read-only. */
import { describe, expect, it } from 'vitest';
import type { Tool } from '../tools/registry.js';
import { overlaps } from './parallel-plan.js';
import { runConversation } from './run-conversation.js';
import { ScriptedProvider } from './scripted-provider.js';

/** File tools over an in-memory disk that count how many calls are inside at once. */
function fileTools() {
  let inside = 0;
  let peak = 0;
  const disk = new Map<string, string>();
  const busy = async <T>(work: () => T): Promise<T> => {
    inside += 1;
    peak = Math.max(peak, inside);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    inside -= 1;
    return work();
  };
  const pathArg = (args: Record<string, unknown>) => [String(args.path)];
  const write: Tool = {
    name: 'write_file',
    description: 'write a file',
    parameters: { type: 'object', properties: { path: { type: 'string' }, text: { type: 'string' } } },
    readOnly: false,
    paths: pathArg,
    execute: (args) => busy(() => (disk.set(String(args.path), String(args.text)), `wrote ${String(args.path)}`)),
  };
  const read: Tool = {
    name: 'read_file',
    description: 'read a file',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
    readOnly: true,
    paths: pathArg,
    execute: (args) => busy(() => disk.get(String(args.path)) ?? 'missing'),
  };
  const note: Tool = { ...write, name: 'append_log', paths: undefined, execute: (args) => busy(() => `logged ${String(args.text)}`) };
  return { tools: [write, read, note], peak: () => peak };
}

const writeCall = (path: string, text = 'x') => ({ name: 'write_file', arguments: JSON.stringify({ path, text }) });
const readCall = (path: string) => ({ name: 'read_file', arguments: JSON.stringify({ path }) });

async function batch(calls: { name: string; arguments: string }[]) {
  const files = fileTools();
  const provider = new ScriptedProvider().script({ toolCalls: calls }, { text: 'done' });
  const result = await runConversation({ userMessage: 'go', history: [], systemPrompt: 's', provider, tools: files.tools });
  return { peak: files.peak(), results: result.newMessages.filter((m) => m.role === 'tool').map((m) => m.content) };
}

describe('tool calls whose paths do not overlap', () => {
  it('run side by side even though they write, and answer in call order', async () => {
    const { peak, results } = await batch([writeCall('/work/a.txt', 'A'), writeCall('/work/b.txt', 'B'), readCall('/work/c.txt')]);
    expect(peak).toBe(3);
    expect(results).toEqual(['wrote /work/a.txt', 'wrote /work/b.txt', 'missing']);
  });

  it('run one at a time when one writes where another reads or writes (the same file, or a file in its directory)', async () => {
    expect((await batch([writeCall('/work/a.txt', 'new'), readCall('/work/a.txt')])).results).toEqual(['wrote /work/a.txt', 'new']);
    expect((await batch([writeCall('/work/a.txt', 'new'), readCall('/work/a.txt')])).peak).toBe(1);
    expect((await batch([writeCall('/work/dir'), writeCall('/work/dir/inner.txt')])).peak).toBe(1);
    // Two reads of one file do not conflict.
    expect((await batch([readCall('/work/a.txt'), readCall('/work/a.txt/../a.txt')])).peak).toBe(2);
  });

  it('run one at a time when a writer names no paths', async () => {
    const { peak } = await batch([writeCall('/work/a.txt'), { name: 'append_log', arguments: '{"text":"hi"}' }]);
    expect(peak).toBe(1);
  });

  it('overlap means the same path or one inside the other, not a shared prefix', () => {
    expect(overlaps('/work/a', '/work/a')).toBe(true);
    expect(overlaps('/work', '/work/a/b.txt')).toBe(true);
    expect(overlaps('/work/a', '/work/ab')).toBe(false);
    expect(overlaps('/', '/etc/hosts')).toBe(true);
  });
});
