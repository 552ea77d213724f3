import { getEventListeners } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NotFoundError, type InboundMessage } from '@herald/adapters';
import { InboundBoundary } from './handover.js';

const log = pino({ level: 'silent' });
const message = (conversation: string, id: string, text = id): InboundMessage => ({
  platform: 'slack',
  messageId: id,
  conversationId: `slack:${conversation}`,
  chatType: 'dm',
  chatId: conversation,
  userId: 'U',
  text,
  attachments: [],
  platformMessageId: id,
  sentAt: 0,
});

/** A promise and the function that resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('InboundBoundary', () => {
  it('retries a message the router could not take until it can', async () => {
    let calls = 0;
    const boundary = new InboundBoundary(
      async () => {
        if (++calls < 3) throw new Error('Connection is closed.');
      },
      log,
      { firstWaitMs: 5 },
    );
    await boundary.handle(message('D1', '1'));
    expect(calls).toBe(3);
  });

  it('gives up once its patience is spent, with the last error', async () => {
    let calls = 0;
    const boundary = new InboundBoundary(
      async () => {
        calls++;
        throw new Error('still down');
      },
      log,
      { firstWaitMs: 5, maxWaitMs: 5, patienceMs: 50 },
    );
    await expect(boundary.handle(message('D1', '1'))).rejects.toThrow('still down');
    expect(calls).toBeGreaterThan(1);
  });

  it('hands a conversation over in arrival order while the first message is being retried; other conversations go on', async () => {
    const routed: string[] = [];
    const firstFailed = gate();
    const retryNow = gate();
    let firstAttempts = 0;
    const boundary = new InboundBoundary(
      async (msg) => {
        if (msg.messageId === 'a1' && ++firstAttempts === 1) {
          firstFailed.open();
          throw new Error('Connection is closed.');
        }
        if (msg.messageId === 'a1') await retryNow.opened;
        routed.push(msg.messageId);
      },
      log,
      { firstWaitMs: 5 },
    );
    const first = boundary.handle(message('A', 'a1'));
    await firstFailed.opened;
    // a2 arrives while a1 waits for its retry; b1 is another conversation.
    const second = boundary.handle(message('A', 'a2'));
    await boundary.handle(message('B', 'b1'));
    expect(routed).toEqual(['b1']);
    retryNow.open();
    await Promise.all([first, second]);
    expect(routed).toEqual(['b1', 'a1', 'a2']);
  });

  it('does not retry what a platform refused (the same reply would be refused again), and logs it as a warning', async () => {
    let calls = 0;
    const lines: Array<Record<string, unknown>> = [];
    const recorded = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const boundary = new InboundBoundary(
      async () => {
        calls++;
        throw new NotFoundError('chat not found', 'telegram');
      },
      recorded,
      { firstWaitMs: 5 },
    );
    await expect(boundary.handle(message('D1', '1'))).rejects.toThrow('chat not found');
    expect(calls).toBe(1);
    // The platform's word on that chat, not a fault of ours: a warning with the reason, no stack.
    expect(lines.map((l) => [l.level, l.msg, l.platformError])).toEqual([
      [40, 'the platform refused the answer to this message; giving up on it', 'chat not found'],
    ]);
  });

  it('hands the next message of a conversation over after an earlier one was given up', async () => {
    const routed: string[] = [];
    const boundary = new InboundBoundary(
      async (msg) => {
        if (msg.messageId === 'bad') throw new Error('always fails');
        routed.push(msg.messageId);
      },
      log,
      { firstWaitMs: 5, maxWaitMs: 5, patienceMs: 30 },
    );
    const bad = boundary.handle(message('A', 'bad'));
    const good = boundary.handle(message('A', 'good'));
    await expect(bad).rejects.toThrow('always fails');
    await good;
    expect(routed).toEqual(['good']);
  });

  it('leaves no listener behind on the process-lifetime shutdown signal, however many hand-overs waited on it', async () => {
    const stop = new AbortController();
    const attempts = new Map<string, number>();
    const boundary = new InboundBoundary(
      async (msg) => {
        // Every message fails once, so each one waits (on the signal) before its retry.
        const n = (attempts.get(msg.messageId) ?? 0) + 1;
        attempts.set(msg.messageId, n);
        if (n === 1) throw new Error('Connection is closed.');
      },
      log,
      { firstWaitMs: 1, signal: stop.signal },
    );
    await Promise.all(Array.from({ length: 50 }, (_, i) => boundary.handle(message(`C${i}`, String(i)))));
    expect([...attempts.values()].every((n) => n === 2)).toBe(true);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('stops waiting at once when shutting down and gives the message up', async () => {
    const stop = new AbortController();
    let calls = 0;
    const failed = gate();
    const boundary = new InboundBoundary(
      async () => {
        calls++;
        failed.open();
        throw new Error('down');
      },
      log,
      { firstWaitMs: 60_000, signal: stop.signal },
    );
    const pending = boundary.handle(message('D1', '1'));
    await failed.opened;
    stop.abort(new Error('shutting down'));
    await expect(pending).rejects.toThrow('shutting down');
    expect(calls).toBe(1);
    // A message handed in after shutdown began still gets its one attempt.
    await expect(boundary.handle(message('D1', '2'))).rejects.toThrow('down');
    expect(calls).toBe(2);
  });
});
