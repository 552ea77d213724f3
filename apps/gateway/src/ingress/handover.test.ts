import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '@herald/adapters';
import { withHandoverRetry } from './handover.js';

const log = pino({ level: 'silent' });
const msg: InboundMessage = {
  platform: 'discord',
  messageId: '1',
  conversationId: 'discord:C',
  chatType: 'dm',
  chatId: 'C',
  userId: 'U',
  text: 'hi',
  attachments: [],
  platformMessageId: '1',
  sentAt: 0,
};

describe('withHandoverRetry', () => {
  it('retries a message the router could not take until it can', async () => {
    let calls = 0;
    const handle = withHandoverRetry(
      async () => {
        if (++calls < 3) throw new Error('Connection is closed.');
      },
      log,
      { firstWaitMs: 5 },
    );
    await handle(msg);
    expect(calls).toBe(3);
  });

  it('gives up after the last attempt and says why', async () => {
    let calls = 0;
    const handle = withHandoverRetry(
      async () => {
        calls++;
        throw new Error('still down');
      },
      log,
      { firstWaitMs: 1, attempts: 3 },
    );
    await expect(handle(msg)).rejects.toThrow('still down');
    expect(calls).toBe(3);
  });

  it('stops waiting when shutting down', async () => {
    const stop = new AbortController();
    let calls = 0;
    const handle = withHandoverRetry(
      async () => {
        calls++;
        throw new Error('down');
      },
      log,
      { firstWaitMs: 60_000, signal: stop.signal },
    );
    const pending = handle(msg);
    setTimeout(() => stop.abort(), 20);
    await expect(pending).rejects.toThrow('down');
    expect(calls).toBe(2);
  });
});
