import { describe, expect, it } from 'vitest';
import type { MailboxEntry } from './mailbox.js';
import { keyOf, payload } from './test-support.js';
import { entryOf, steerable } from './running-turn.js';

const entry = (over: Partial<MailboxEntry['payload']> = {}): MailboxEntry => ({
  id: 'telegram:7',
  sessionKey: keyOf(1),
  seq: 4,
  enqueuedAt: 1,
  payload: { ...payload(1, 4, 'use blue'), ...over },
});

describe('steerable', () => {
  it('passes a text message on, raw and parsed', () => {
    const raw = JSON.stringify(entry());
    expect(steerable(raw)).toEqual({ raw, entry: entry() });
  });

  it('keeps a message with files out of the running turn', () => {
    const raw = JSON.stringify(entry({ attachments: [{ kind: 'image', url: 'tg-file:p1', fileId: 'p1', mimeType: 'image/jpeg' }] }));
    expect(steerable(raw)).toBeUndefined();
  });
});

describe('entryOf', () => {
  it("reads the entry's id and arrival number from a job's data", () => {
    expect(entryOf({ sessionKey: keyOf(1), entryId: 'telegram:7', seq: 4 })).toEqual({ sessionKey: keyOf(1), entryId: 'telegram:7', seq: 4 });
  });

  it('reads them out of the whole entry that jobs added before the trim carry', () => {
    expect(entryOf({ sessionKey: keyOf(1), entry: JSON.stringify(entry()) })).toEqual({ entryId: 'telegram:7', seq: 4 });
  });
});
