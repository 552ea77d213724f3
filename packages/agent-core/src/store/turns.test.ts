import { describe, expect, it } from 'vitest';
import { StoreNotFoundError } from './errors.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';

describe.each(STORE_BACKENDS)('the turn outbox on %s', (backend) => {
const temp = useTempStores(backend);

async function withSession() {
  const store = await temp.open();
  const { session } = await store.getOrCreateSession('agent:main:slack:thread:C1:171.5', { source: 'slack' });
  return { store, sessionId: session.id };
}

describe('turn outbox', () => {
  it('tracks a turn from running to delivered', async () => {
    const { store, sessionId } = await withSession();
    const started = await store.beginTurn('slack:Ev1', sessionId);
    expect(started).toMatchObject({ id: 'slack:Ev1', sessionId, status: 'running', reply: null, deliveredIds: [], error: null });

    expect(await store.recordReply('slack:Ev1', 'Here you go.')).toMatchObject({ status: 'replied', reply: 'Here you go.' });
    const delivered = await store.markDelivered('slack:Ev1', ['171.6', '171.7']);
    expect(delivered).toMatchObject({ status: 'delivered', reply: 'Here you go.', deliveredIds: ['171.6', '171.7'] });
    expect(await store.getTurn('slack:Ev1')).toEqual(delivered);
  });

  it('tells a re-run after a crash what already happened instead of starting over', async () => {
    const { store, sessionId } = await withSession();
    await store.beginTurn('t1', sessionId);
    await store.recordReply('t1', 'computed before the crash');
    // The job runs again on another worker: the reply is there, so it must be delivered, not regenerated.
    const rerun = await store.beginTurn('t1', sessionId);
    expect(rerun).toMatchObject({ status: 'replied', reply: 'computed before the crash' });

    await store.markDelivered('t1', ['m1']);
    expect((await store.beginTurn('t1', sessionId)).status).toBe('delivered');
  });

  it('keeps chunk ids delivered before a crash when the rest are delivered later', async () => {
    const { store, sessionId } = await withSession();
    await store.beginTurn('t2', sessionId);
    await store.markDelivered('t2', ['a', 'b']);
    expect((await store.markDelivered('t2', ['b', 'c'])).deliveredIds).toEqual(['a', 'b', 'c']);
  });

  it('records interruptions and failures with their error', async () => {
    const { store, sessionId } = await withSession();
    await store.beginTurn('t3', sessionId);
    expect(await store.markTurn('t3', 'interrupted')).toMatchObject({ status: 'interrupted', error: null });
    expect(await store.markTurn('t3', 'failed', 'provider 500')).toMatchObject({ status: 'failed', error: 'provider 500' });
    expect((await store.getTurn('t3'))?.updatedAt).toBeGreaterThanOrEqual((await store.getTurn('t3'))!.createdAt);
  });

  it('refuses unknown turns and sessions with a typed error', async () => {
    const { store } = await withSession();
    expect(await store.getTurn('ghost')).toBeNull();
    await expect(store.recordReply('ghost', 'x')).rejects.toThrow(StoreNotFoundError);
    await expect(store.markDelivered('ghost', ['x'])).rejects.toThrow(StoreNotFoundError);
    await expect(store.markTurn('ghost', 'failed')).rejects.toThrow(StoreNotFoundError);
    await expect(store.beginTurn('t4', 'no-session')).rejects.toThrow(StoreNotFoundError);
  });
});

describe('known threads', () => {
  it('remembers threads per platform, idempotently', async () => {
    const { store } = await withSession();
    expect(await store.isKnownThread('discord', '999')).toBe(false);
    await store.rememberThread('discord', '999');
    await store.rememberThread('discord', '999');
    expect(await store.isKnownThread('discord', '999')).toBe(true);
    expect(await store.isKnownThread('slack', '999')).toBe(false);
  });
});
});
