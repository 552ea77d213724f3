import { describe, expect, it } from 'vitest';
import { DELIVERY_KEY, deliveryOf, gateEvent } from './ack-gate.js';

describe('gateEvent', () => {
  it('taken once every hand-over the event started or joined succeeded, including one added after another settled', async () => {
    const outcome = gateEvent(async (delivery) => {
      delivery.add(Promise.resolve());
      await Promise.resolve();
      delivery.add(new Promise<void>((resolve) => setImmediate(resolve)));
    }, 5_000);
    expect(await outcome).toBe('taken');
  });

  it('taken when nothing was handed over (an ignored event)', async () => {
    expect(await gateEvent(async () => {}, 5_000)).toBe('taken');
  });

  it('failed when a hand-over failed, pending when one is still running at the deadline', async () => {
    expect(await gateEvent(async (d) => d.add(Promise.reject(new Error('redis down'))), 5_000)).toBe('failed');
    expect(await gateEvent(async (d) => d.add(new Promise<void>(() => {})), 20)).toBe('pending');
  });

  it('unreadable when Bolt itself rejected the payload', async () => {
    expect(await gateEvent(() => Promise.reject(new Error('cannot read')), 5_000)).toBe('unreadable');
  });

  it('finds the delivery in a Bolt context only when the transport put one there', async () => {
    let found: unknown;
    await gateEvent(async (d) => {
      found = deliveryOf({ [DELIVERY_KEY]: d });
      expect(found).toBe(d);
    }, 5_000);
    expect(deliveryOf({})).toBeUndefined();
    expect(deliveryOf({ [DELIVERY_KEY]: 'not one' })).toBeUndefined();
  });
});
