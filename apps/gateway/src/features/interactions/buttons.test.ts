import { describe, expect, it } from 'vitest';
import { useTestRedis } from '../../../../../test/helpers/redis.js';
import { ButtonStore } from './buttons.js';

const { redis, prefix } = useTestRedis('buttons');

describe('ButtonStore', () => {
  const store = (): ButtonStore => new ButtonStore(redis, prefix);
  const choices = [
    { label: 'Trip', text: '/resume Trip' },
    { label: 'Work', text: '/resume Work' },
  ];

  it("a one-use offer: the asker's first press counts, a second is stale; someone else's press is foreign and uses nothing up", async () => {
    const { buttons } = await store().offer({ userId: 'u1', choices, once: true });
    expect(buttons.map((b) => b.label)).toEqual(['Trip', 'Work']);
    expect(buttons.every((b) => Buffer.byteLength(b.data) <= 64)).toBe(true);
    expect(await store().press(buttons[1].data, 'u2')).toEqual({ status: 'foreign' });
    expect(await store().press(buttons[1].data, 'u1')).toEqual({ status: 'ok', text: '/resume Work' });
    expect(await store().press(buttons[0].data, 'u1')).toEqual({ status: 'stale' });
  });

  it('a standing offer counts until withdrawn; data that is not ours, or points past the choices, is stale', async () => {
    const { id, buttons } = await store().offer({ userId: 'u1', choices, once: false });
    expect(await store().press(buttons[0].data, 'u1')).toEqual({ status: 'ok', text: '/resume Trip' });
    expect(await store().press(buttons[0].data, 'u1')).toEqual({ status: 'ok', text: '/resume Trip' });
    expect(await store().press(buttons[0].data.replace(/:0$/, ':7'), 'u1')).toEqual({ status: 'stale' });
    expect(await store().press('something-else', 'u1')).toEqual({ status: 'stale' });
    await store().withdraw(id);
    expect(await store().press(buttons[0].data, 'u1')).toEqual({ status: 'stale' });
  });

  it('an offer expires on its own', async () => {
    const { buttons } = await store().offer({ userId: 'u1', choices, once: true }, 1);
    await expect.poll(async () => (await store().press(buttons[0].data, 'u1')).status).toBe('stale');
  });
});
