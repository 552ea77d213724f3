import { describe, expect, it } from 'vitest';
import { StoreNotFoundError } from './errors.js';
import { useTempStores } from './test-support.js';

const temp = useTempStores();

function withSession() {
  const store = temp.open();
  const { session } = store.getOrCreateSession('agent:main:slack:thread:C1:171.5', { source: 'slack' });
  return { store, sessionId: session.id };
}

describe('turn outbox', () => {
  it('tracks a turn from running to delivered', () => {
    const { store, sessionId } = withSession();
    const started = store.beginTurn('slack:Ev1', sessionId);
    expect(started).toMatchObject({ id: 'slack:Ev1', sessionId, status: 'running', reply: null, deliveredIds: [], error: null });

    expect(store.recordReply('slack:Ev1', 'Here you go.')).toMatchObject({ status: 'replied', reply: 'Here you go.' });
    const delivered = store.markDelivered('slack:Ev1', ['171.6', '171.7']);
    expect(delivered).toMatchObject({ status: 'delivered', reply: 'Here you go.', deliveredIds: ['171.6', '171.7'] });
    expect(store.getTurn('slack:Ev1')).toEqual(delivered);
  });

  it('tells a re-run after a crash what already happened instead of starting over', () => {
    const { store, sessionId } = withSession();
    store.beginTurn('t1', sessionId);
    store.recordReply('t1', 'computed before the crash');
    // The job runs again on another worker: the reply is there, so it must be delivered, not regenerated.
    const rerun = store.beginTurn('t1', sessionId);
    expect(rerun).toMatchObject({ status: 'replied', reply: 'computed before the crash' });

    store.markDelivered('t1', ['m1']);
    expect(store.beginTurn('t1', sessionId).status).toBe('delivered');
  });

  it('keeps chunk ids delivered before a crash when the rest are delivered later', () => {
    const { store, sessionId } = withSession();
    store.beginTurn('t2', sessionId);
    store.markDelivered('t2', ['a', 'b']);
    expect(store.markDelivered('t2', ['b', 'c']).deliveredIds).toEqual(['a', 'b', 'c']);
  });

  it('records interruptions and failures with their error', () => {
    const { store, sessionId } = withSession();
    store.beginTurn('t3', sessionId);
    expect(store.markTurn('t3', 'interrupted')).toMatchObject({ status: 'interrupted', error: null });
    expect(store.markTurn('t3', 'failed', 'provider 500')).toMatchObject({ status: 'failed', error: 'provider 500' });
    expect(store.getTurn('t3')?.updatedAt).toBeGreaterThanOrEqual(store.getTurn('t3')!.createdAt);
  });

  it('refuses unknown turns and sessions with a typed error', () => {
    const { store } = withSession();
    expect(store.getTurn('ghost')).toBeNull();
    expect(() => store.recordReply('ghost', 'x')).toThrow(StoreNotFoundError);
    expect(() => store.markDelivered('ghost', ['x'])).toThrow(StoreNotFoundError);
    expect(() => store.markTurn('ghost', 'failed')).toThrow(StoreNotFoundError);
    expect(() => store.beginTurn('t4', 'no-session')).toThrow(StoreNotFoundError);
  });
});

describe('known threads', () => {
  it('remembers threads per platform, idempotently', () => {
    const { store } = withSession();
    expect(store.isKnownThread('discord', '999')).toBe(false);
    store.rememberThread('discord', '999');
    store.rememberThread('discord', '999');
    expect(store.isKnownThread('discord', '999')).toBe(true);
    expect(store.isKnownThread('slack', '999')).toBe(false);
  });
});
