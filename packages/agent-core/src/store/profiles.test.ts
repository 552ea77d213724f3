/** Sessions carry their agent profile; listing and full-text search can keep to one profile (both backends). */
import { describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

describe.each(STORE_BACKENDS)('session profiles on %s', (backend) => {
  const temp = useTempStores(backend);

  it('records the profile; default finds sessions without one; search never crosses profiles when asked not to', async () => {
    const store = await temp.open();
    const plain = (await store.getOrCreateSession('agent:main:telegram:dm:1', { source: 'telegram', userId: '1' })).session;
    const support = (await store.getOrCreateSession('agent:support:telegram:dm:1', { source: 'telegram', userId: '1', profile: 'support' })).session;
    expect([plain.profile, support.profile]).toEqual([null, 'support']);
    await store.appendMessages(plain.id, [{ role: 'user', content: 'lisbon in the default profile' }]);
    await store.appendMessages(support.id, [{ role: 'user', content: 'lisbon in the support profile' }]);

    const ids = async (profile?: string) => (await store.search('lisbon', { userId: '1', source: 'telegram', profile })).map((h) => h.sessionId).sort();
    expect(await ids('support')).toEqual([support.id]);
    expect(await ids('default')).toEqual([plain.id]);
    expect(await ids()).toEqual([plain.id, support.id].sort());
    expect((await store.listSessions({ profile: 'support' })).sessions.map((s) => s.id)).toEqual([support.id]);
    expect((await store.listSessions({ profile: 'default' })).sessions.map((s) => s.id)).toEqual([plain.id]);
  });
});
