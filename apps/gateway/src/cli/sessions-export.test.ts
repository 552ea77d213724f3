/**
 * `herald sessions export`: ShareGPT lines from a real store on both backends, the filters, the file written
 * whole, and bad options refused with a message naming them.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../packages/agent-core/src/store/test-support.js';
import { CliError, type CliIo } from './io.js';
import { exportSessions } from './sessions-export.js';

function capture(): CliIo & { lines: string[] } {
  const lines: string[] = [];
  return { lines, out: (l) => void lines.push(l), err: () => undefined, json: () => 0, ask: async () => null };
}

describe.each(STORE_BACKENDS)('herald sessions export on %s', (backend) => {
  const temp = useTempStores(backend);

  async function seeded() {
    const store = await temp.open();
    const done = await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', systemPrompt: 'You are Herald.' });
    await store.appendMessages(done.session.id, [
      // Stored the way sessions from before B7 were: the saved notes in front of the first message.
      { role: 'user', content: '<memory>\nNotes saved from earlier conversations (edit them with the memory tool):\nName: Ana\n</memory>\n\nhi' },
      { role: 'assistant', content: 'hello', finish_reason: 'stop' },
    ]);
    const cut = await store.getOrCreateSession('agent:main:slack:dm:2', { source: 'slack' });
    await store.appendMessages(cut.session.id, [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }], finish_reason: 'tool_calls' },
    ]);
    return store;
  }

  it('writes one ShareGPT record per session, filtered by status and source', async () => {
    const store = await seeded();
    const io = capture();
    expect(await exportSessions(store, { format: 'sharegpt', status: 'completed' }, io)).toBe(0);
    const records = io.lines.map((l) => JSON.parse(l) as { source: string; completed: boolean; conversations: { from: string; value: string }[] });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ source: 'telegram', completed: true });
    // The notes block is not part of the trajectory (N2).
    expect(records[0]!.conversations).toEqual([
      { from: 'system', value: 'You are Herald.' },
      { from: 'human', value: 'hi' },
      { from: 'gpt', value: '<think>\n</think>\nhello' },
    ]);

    const failed = capture();
    await exportSessions(store, { format: 'sharegpt', status: 'failed', source: 'slack' }, failed);
    expect(failed.lines.map((l) => (JSON.parse(l) as { source: string }).source)).toEqual(['slack']);

    const future = capture();
    await exportSessions(store, { format: 'sharegpt', since: '2999-01-01' }, future);
    expect(future.lines).toEqual([]);
  });

  it('writes --out whole, and refuses bad options without writing anything', async () => {
    const store = await seeded();
    const out = join(temp.dir, 'trajectories.jsonl');
    await exportSessions(store, { format: 'sharegpt', out }, capture());
    expect(readFileSync(out, 'utf8').trim().split('\n')).toHaveLength(2);

    const other = join(temp.dir, 'x.jsonl');
    await expect(exportSessions(store, { format: 'csv', out: other }, capture())).rejects.toThrow(CliError);
    await expect(exportSessions(store, { format: 'sharegpt', status: 'done', out: other }, capture())).rejects.toThrow(
      /--status: must be one of completed, failed, all/,
    );
    await expect(exportSessions(store, { format: 'sharegpt', since: 'last week', out: other }, capture())).rejects.toThrow(/--since: must be a date/);
    expect(existsSync(other)).toBe(false);
  });
});
