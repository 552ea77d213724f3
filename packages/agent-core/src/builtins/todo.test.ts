import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../store/test-support.js';
import { createTodoTool, getTodos } from './todo.js';

describe.each(STORE_BACKENDS)('todo on %s', (backend) => {
  const temp = useTempStores(backend);
  const signal = new AbortController().signal;

  async function setup() {
    const store = await temp.open();
    const a = (await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', userId: '1' })).session;
    const b = (await store.getOrCreateSession('agent:main:telegram:dm:2', { source: 'telegram', userId: '2' })).session;
    return { store, tool: createTodoTool(store), a: { signal, sessionId: a.id }, b: { signal, sessionId: b.id } };
  }

  describe('todo tool', () => {
    it('keeps a numbered list per session that the model works through and /status can read', async () => {
      const { store, tool, a, b } = await setup();
      expect(await tool.execute({ action: 'list' }, a)).toBe('The todo list is empty.');
      await tool.execute({ action: 'add', texts: ['Find flights', 'Book hotel', 'Rent a car'] }, a);
      await tool.execute({ action: 'update', id: 1, status: 'done' }, a);
      await tool.execute({ action: 'update', id: '2', status: 'in_progress', text: 'Book hotel near the beach' }, a);
      const out = await tool.execute({ action: 'remove', id: 3 }, a);
      expect(out).toBe('Todo list (1 of 2 done):\n[x] 1. Find flights\n[~] 2. Book hotel near the beach (in progress)');
      // Items keep their numbers when others go.
      expect(await tool.execute({ action: 'add', text: 'Pack' }, a)).toContain('[~] 2. Book hotel near the beach (in progress)\n[ ] 3. Pack');
      expect(await getTodos(store, a.sessionId)).toEqual([
        { id: 1, text: 'Find flights', status: 'done' },
        { id: 2, text: 'Book hotel near the beach', status: 'in_progress' },
        { id: 3, text: 'Pack', status: 'pending' },
      ]);
      expect(await getTodos(store, b.sessionId)).toEqual([]);
    });

    it('explains mistakes instead of guessing', async () => {
      const { tool, a } = await setup();
      await expect(tool.execute({ action: 'update', id: 9, status: 'done' }, a)).rejects.toThrow(/there is no item 9/);
      await expect(tool.execute({ action: 'update', id: 1 }, a)).rejects.toThrow(/give a new "status" and\/or "text"/);
      await expect(tool.execute({ action: 'add', text: 'x', status: 'finished' }, a)).resolves.toContain('1. x');
      await expect(tool.execute({ action: 'update', id: 1, status: 'finished' }, a)).rejects.toThrow(/"status" must be one of pending, in_progress, done/);
      await expect(tool.execute({ action: 'add', texts: Array(51).fill('t') }, a)).rejects.toThrow(/can hold 50 items/);
      await expect(tool.execute({ action: 'list' }, { signal })).rejects.toThrow(/no session is known/);
    });

    it('follows the conversation into the session a compression continues it in, but not into a new one', async () => {
      const { store, tool, a } = await setup();
      await tool.execute({ action: 'add', text: 'Ship the release' }, a);
      const key = 'agent:main:telegram:dm:1';
      const child = await store.startNewSession(key, { source: 'telegram', userId: '1', parentSessionId: a.sessionId, endPreviousReason: 'compression' });
      expect((await getTodos(store, child.id)).map((t) => t.text)).toEqual(['Ship the release']);
      await tool.execute({ action: 'update', id: 1, status: 'done' }, { signal, sessionId: child.id });
      expect((await getTodos(store, a.sessionId))[0].status).toBe('done');
      // /new starts over: a session without a compressed parent has its own (empty) list.
      const fresh = await store.startNewSession(key, { source: 'telegram', userId: '1', endPreviousReason: 'session_reset' });
      expect(await getTodos(store, fresh.id)).toEqual([]);
    });
  });
});
