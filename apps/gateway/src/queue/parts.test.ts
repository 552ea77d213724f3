/**
 * Messages in parts as one turn, with real Redis and BullMQ: the parts of an album or of a split long text reach the
 * mailbox one by one (a webhook answered per part, several polls), and the worker answers them together in every
 * busy-input mode, without the later parts interrupting, steering or being "queued" against their own turn.
 */
import { describe, expect, it } from 'vitest';
import type { Attachment } from '@herald/adapters';
import type { TurnPayload } from './mailbox.js';
import type { BusyInputMode } from './producer.js';
import type { TurnContext } from './worker.js';
import { keyOf, payload, rig, until } from './test-support.js';

const photo = (n: number): Attachment => ({ kind: 'image', url: `tg-file:p${n}`, fileId: `p${n}`, mimeType: 'image/jpeg' });
const part = (session: number, n: number, album: string, text = ''): TurnPayload => ({
  ...payload(session, n, text),
  attachments: [photo(n)],
  partOf: { id: album, kind: 'album' },
});
const textPart = (session: number, n: number, split: string, text: string, last?: true): TurnPayload => ({
  ...payload(session, n, text),
  partOf: { id: split, kind: 'text', ...(last && { last }) },
});

interface Turn {
  texts: string[];
  files: string[];
  canDeliver: boolean;
  steered: string[];
}

async function albumRig(mode: BusyInputMode, hold?: (ctx: TurnContext) => Promise<void>, partsQuietMs = 500) {
  const turns: Turn[] = [];
  const r = await rig({
    workers: 2,
    mode,
    partsQuietMs,
    runTurn: async (ctx) => {
      await hold?.(ctx);
      turns.push({
        texts: ctx.entries.map((e) => e.payload.text),
        files: ctx.entries.flatMap((e) => (e.payload.attachments ?? []).map((a) => a.fileId ?? '')),
        canDeliver: await ctx.canDeliver(),
        steered: ctx.takeSteerMessages(),
      });
    },
  });
  return { ...r, turns };
}

describe('albums', () => {
  it.each(['interrupt', 'queue', 'steer'] as const)('%s mode: parts arriving one by one while the worker waits are one turn', async (mode) => {
    const s = 300 + ['interrupt', 'queue', 'steer'].indexOf(mode);
    const { producer, mailbox, turns } = await albumRig(mode);
    const first = await producer.submit(keyOf(s), part(s, 1, 'a1', 'our trip'), mode);
    // The worker has the first part (the session is busy) before the others arrive, as with a webhook.
    await until(() => mailbox.isBusy(keyOf(s)));
    const later = [await producer.submit(keyOf(s), part(s, 2, 'a1'), mode), await producer.submit(keyOf(s), part(s, 3, 'a1'), mode)];
    await until(() => turns.length === 1);
    await until(async () => (await mailbox.length(keyOf(s))) === 0);
    expect(turns).toEqual([{ texts: ['our trip', '', ''], files: ['p1', 'p2', 'p3'], canDeliver: true, steered: [] }]);
    // Not a message against a busy session: no "queued" acknowledgement for the album's own parts.
    expect([first, ...later].some((r) => r.status === 'queued' && 'acknowledge' in r && r.acknowledge)).toBe(false);
  });

  it('a part that comes after the album turn started is a turn of its own, and does not make the answer stale', async () => {
    const s = 310;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = false;
    const { producer, turns } = await albumRig('interrupt', async (ctx) => {
      if (ctx.entries[0].payload.text !== 'first') return;
      running = true;
      await gate;
    });
    await producer.submit(keyOf(s), part(s, 1, 'a2', 'first'), 'interrupt');
    await until(() => running);
    await producer.submit(keyOf(s), part(s, 2, 'a2', 'late'), 'interrupt');
    release();
    await until(() => turns.length === 2);
    expect(turns.map((t) => [t.texts, t.canDeliver])).toEqual([
      [['first'], true],
      [['late'], true],
    ]);
  });

  it('steer mode: a message with files is not steered into the running turn (its files would be lost), it runs next', async () => {
    const s = 320;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let running = false;
    const { producer, turns } = await albumRig('steer', async (ctx) => {
      if (ctx.entries[0].payload.text !== 'working') return;
      running = true;
      await gate;
    });
    await producer.submit(keyOf(s), payload(s, 1, 'working'), 'steer');
    await until(() => running);
    await producer.submit(keyOf(s), { ...payload(s, 2, 'with a photo'), attachments: [photo(2)] }, 'steer');
    release();
    await until(() => turns.some((t) => t.texts.includes('with a photo')));
    expect(turns.find((t) => t.texts.includes('with a photo'))).toMatchObject({ texts: ['with a photo'], files: ['p2'] });
    expect(turns.flatMap((t) => t.steered)).not.toContain('with a photo');
  });

  it('a /stop while the album is waited for: the album is not answered, and the next message is', async () => {
    const s = 330;
    const { producer, mailbox, turns } = await albumRig('interrupt');
    await producer.submit(keyOf(s), part(s, 1, 'a3', 'never mind'), 'interrupt');
    await until(() => mailbox.isBusy(keyOf(s)));
    await mailbox.stop(keyOf(s));
    await producer.submit(keyOf(s), payload(s, 2, 'after the stop'), 'interrupt');
    await until(() => turns.some((t) => t.texts.includes('after the stop')));
    expect(turns.map((t) => t.texts)).toEqual([['after the stop']]);
  });
});

describe('split texts', () => {
  // The quiet is far longer than any test may take: the turns below run only because the last part ends the wait.
  const NEVER_QUIET_MS = 600_000;

  it.each(['interrupt', 'queue', 'steer'] as const)(
    '%s mode: the parts arriving one by one are one turn, answered as soon as the last part is in',
    async (mode) => {
      const s = 340 + ['interrupt', 'queue', 'steer'].indexOf(mode);
      const { producer, mailbox, turns } = await albumRig(mode, undefined, NEVER_QUIET_MS);
      const first = await producer.submit(keyOf(s), textPart(s, 1, `${s}:1`, 'a'.repeat(4096)), mode);
      await until(() => mailbox.isBusy(keyOf(s)));
      const later = [
        await producer.submit(keyOf(s), textPart(s, 2, `${s}:1`, 'b'.repeat(4096)), mode),
        await producer.submit(keyOf(s), textPart(s, 3, `${s}:1`, 'c'.repeat(100), true), mode),
      ];
      await until(() => turns.length === 1);
      await until(async () => (await mailbox.length(keyOf(s))) === 0);
      expect(turns).toEqual([{ texts: ['a'.repeat(4096), 'b'.repeat(4096), 'c'.repeat(100)], files: [], canDeliver: true, steered: [] }]);
      expect([first, ...later].some((r) => r.status === 'queued' && 'acknowledge' in r && r.acknowledge)).toBe(false);
    },
  );

  it('a long text nothing follows is answered alone once no part came for the quiet time; the next message is its own turn', async () => {
    const s = 350;
    const { producer, turns } = await albumRig('queue');
    await producer.submit(keyOf(s), textPart(s, 1, `${s}:1`, 'x'.repeat(3000)), 'queue');
    await until(() => turns.length === 1);
    await producer.submit(keyOf(s), payload(s, 2, 'short and new'), 'queue');
    await until(() => turns.length === 2);
    expect(turns.map((t) => t.texts)).toEqual([['x'.repeat(3000)], ['short and new']]);
  });

  it('a /stop while the next part is waited for: the text is not answered, and the next message is', async () => {
    const s = 351;
    const { producer, mailbox, turns } = await albumRig('interrupt', undefined, NEVER_QUIET_MS);
    await producer.submit(keyOf(s), textPart(s, 1, `${s}:1`, 'y'.repeat(4096)), 'interrupt');
    await until(() => mailbox.isBusy(keyOf(s)));
    await mailbox.stop(keyOf(s));
    await producer.submit(keyOf(s), payload(s, 2, 'after the stop'), 'interrupt');
    await until(() => turns.some((t) => t.texts.includes('after the stop')));
    expect(turns.map((t) => t.texts)).toEqual([['after the stop']]);
  });
});
