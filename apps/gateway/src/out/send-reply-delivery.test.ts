import { describe, expect, it } from 'vitest';
import { AuthError, FormattingError, NetworkError, RateLimitedError } from '@herald/adapters';
import { deliver, DeliveryError, DELIVERY_FAILED_NOTICE } from './send-reply.js';
import { recordingEgress, type RecordingEgress } from './test-support.js';

const flakyEgress = (failures: Error[]): RecordingEgress => recordingEgress({ failures });

describe('deliver', () => {
  it('retries network errors twice with backoff, then succeeds', async () => {
    const egress = flakyEgress([new NetworkError('reset', 'telegram'), new NetworkError('reset', 'telegram')]);
    const ids = await deliver(egress, 'telegram:1', 'hello', { replyTo: '9', baseDelayMs: 1 });
    expect(ids).toEqual(['m3']);
    expect(egress.sends.map((s) => s.text)).toEqual(['hello', 'hello', 'hello']);
    expect(egress.sends[2].opts).toMatchObject({ replyTo: '9', plain: false });
  });

  it('resends once as plain text when the platform rejects the formatting', async () => {
    const egress = flakyEgress([new FormattingError("can't parse entities", 'telegram')]);
    await deliver(egress, 'telegram:1', '**bold**', { baseDelayMs: 1 });
    expect(egress.sends.map((s) => s.opts?.plain)).toEqual([false, true]);
  });

  it('waits out a rate limit for as long as the platform asks', async () => {
    const egress = flakyEgress([new RateLimitedError('telegram', 30)]);
    const started = Date.now();
    await deliver(egress, 'telegram:1', 'hi', { baseDelayMs: 1 });
    expect(egress.sends).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
  });

  it('after the retries, tells the user once in plain text and throws', async () => {
    const err = () => new NetworkError('down', 'telegram');
    const egress = flakyEgress([err(), err(), err()]);
    await expect(deliver(egress, 'telegram:1', 'answer', { baseDelayMs: 1 })).rejects.toBeInstanceOf(DeliveryError);
    expect(egress.sends.map((s) => s.text)).toEqual(['answer', 'answer', 'answer', DELIVERY_FAILED_NOTICE]);
    expect(egress.sends[3].opts?.plain).toBe(true);
  });

  it('does not retry what retrying cannot fix', async () => {
    const egress = flakyEgress([new AuthError('token revoked', 'telegram')]);
    await expect(deliver(egress, 'telegram:1', 'answer', { baseDelayMs: 1 })).rejects.toThrow(/token revoked/);
    expect(egress.sends.map((s) => s.text)).toEqual(['answer', DELIVERY_FAILED_NOTICE]);
  });
});

describe('deliver through the real Telegram egress', () => {
  it('a long answer whose second chunk fails once arrives complete, with no chunk twice', async () => {
    const { startTelegramFake } = await import('../../../../test/fakes/telegram/index.js');
    const { createTelegramEgress } = await import('@herald/adapters/telegram');
    const { pino } = await import('pino');
    const tg = await startTelegramFake();
    try {
      tg.world.ensureChat(4242, 'private');
      const egress = createTelegramEgress({ token: tg.token, apiRoot: tg.url, logger: pino({ level: 'silent' }) });
      const answer = Array.from({ length: 120 }, (_, i) => `Line ${i}: ${'words '.repeat(12)}`).join('\n');
      // The connection drops while the second part goes out (the first one already reached the user).
      tg.failNext('sendMessage', 'network', 1, (params) => String(params.text).includes('(2/3)'));
      const ids = await deliver(egress, 'telegram:4242', answer, { baseDelayMs: 1 });
      const texts = tg.sent.filter((s) => s.method === 'sendMessage').map((s) => s.text ?? '');
      expect(texts.map((t) => /\((\d)\/3\)$/.exec(t)?.[1])).toEqual(['1', '2', '3']);
      expect(ids).toHaveLength(3);
      expect(new Set(ids).size).toBe(3);
    } finally {
      await tg.close();
    }
  });
});
