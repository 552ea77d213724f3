import { describe, expect, it } from 'vitest';
import { PREVIEW_CHARS } from './session-overviews.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

describe.each(STORE_BACKENDS)('session overviews on %s', (backend) => {
  const temp = useTempStores(backend);

  it('lists each session with its first user message, user name and last activity, newest first, in pages', async () => {
    const store = await temp.open();
    const ann = (await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', userId: '1', userName: 'Ann Example', chatId: '1' })).session;
    await store.appendMessages(ann.id, [
      { role: 'user', content: '  how do I\n bake rye bread?  ' },
      { role: 'assistant', content: 'Slowly.' },
      { role: 'user', content: 'and spelt?' },
    ]);
    const bob = (await store.getOrCreateSession('agent:main:slack:dm:D2', { source: 'slack', userId: 'U2', chatId: 'D2' })).session;
    await store.appendMessages(bob.id, [{ role: 'user', content: 'x'.repeat(PREVIEW_CHARS + 50) }]);
    const empty = (await store.getOrCreateSession('agent:main:discord:dm:3', { source: 'discord', userId: '3' })).session;
    await store.sql.run('UPDATE messages SET created_at = ? WHERE session_id = ?', [ann.startedAt + 90_000, ann.id]);

    const first = await store.listSessionOverviews({ limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual([empty.id, bob.id]);
    expect(first.sessions[0]).toMatchObject({ userName: null, firstUserText: null, lastActivityAt: empty.startedAt, messageCount: 0 });
    expect(first.sessions[1].firstUserText).toBe('x'.repeat(PREVIEW_CHARS));
    const second = await store.listSessionOverviews({ limit: 2, cursor: first.nextCursor! });
    expect(second.nextCursor).toBeNull();
    expect(second.sessions).toHaveLength(1);
    expect(second.sessions[0]).toMatchObject({
      id: ann.id,
      userName: 'Ann Example',
      firstUserText: '  how do I\n bake rye bread?  ',
      lastActivityAt: ann.startedAt + 90_000,
      messageCount: 3,
    });

    expect((await store.listSessionOverviews({ source: 'slack' })).sessions.map((s) => s.id)).toEqual([bob.id]);
    expect(await store.getSessionOverview(ann.id)).toEqual(second.sessions[0]);
    expect(await store.getSessionOverview('ghost')).toBeNull();
    const some = await store.sessionOverviewsByIds([bob.id, ann.id, 'ghost', ann.id]);
    expect(some.map((s) => s.id).sort()).toEqual([ann.id, bob.id].sort());
    expect(some.find((s) => s.id === ann.id)).toEqual(second.sessions[0]);
    expect(await store.sessionOverviewsByIds([])).toEqual([]);
  });

  it('keeps the user name across compression (the child continues the parent) unless given another', async () => {
    const store = await temp.open();
    const key = 'agent:main:telegram:dm:7';
    const parent = (await store.getOrCreateSession(key, { source: 'telegram', userId: '7', userName: 'Zoë' })).session;
    const child = await store.startNewSession(key, { source: 'telegram', userId: '7', parentSessionId: parent.id, endPreviousReason: 'compression' });
    expect((await store.getSessionOverview(child.id))?.userName).toBe('Zoë');
    const renamed = await store.startNewSession(key, {
      source: 'telegram',
      userId: '7',
      userName: 'Zoe B',
      parentSessionId: child.id,
      endPreviousReason: 'compression',
    });
    expect((await store.getSessionOverview(renamed.id))?.userName).toBe('Zoe B');
    // A fresh start (no parent) with no name stays without one.
    const fresh = await store.startNewSession(key, { source: 'telegram', userId: '7', endPreviousReason: 'session_reset' });
    expect((await store.getSessionOverview(fresh.id))?.userName).toBeNull();
  });
});
