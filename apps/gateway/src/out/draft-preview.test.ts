import { NotFoundError, type PlatformEgress } from '@herald/adapters';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { canDraft, DraftPreview } from './draft-preview.js';
import { ChatOutlet, LiveMessage } from './live-message.js';

const log = pino({ level: 'silent' });

/** A Telegram-like egress that records drafts, sends and edits; `refuseDrafts` answers drafts like an old Bot API server. */
function recordingEgress(refuseDrafts: boolean): PlatformEgress & { calls: string[] } {
  const calls: string[] = [];
  return {
    platform: 'telegram',
    maxMessageLength: 4096,
    duplicateSafety: 'none',
    typingRefreshMs: 4000,
    voiceFormat: 'ogg_opus',
    calls,
    send: async (_c, text) => {
      calls.push(`send ${text}`);
      return { messageIds: ['77'] };
    },
    edit: async (_c, id, text) => void calls.push(`edit ${id} ${text}`),
    draft: async (_c, draftId, text) => {
      if (refuseDrafts) throw new NotFoundError('telegram sendMessageDraft failed: 404 Not Found', 'telegram');
      calls.push(`draft ${draftId > 0 ? 'id' : 'zero'} ${text}`);
    },
    typing: async () => {},
    react: async () => {},
    sendFile: async () => '0',
  };
}

function preview(egress: PlatformEgress, text: { value: string }): DraftPreview {
  const out = new ChatOutlet(egress, 'telegram:42', 0, log);
  const message = (): LiveMessage =>
    new LiveMessage(
      out,
      () => text.value,
      'streamed reply',
      async () => true,
    );
  return new DraftPreview(
    out,
    () => text.value,
    message,
    async () => true,
    log,
  );
}

describe('DraftPreview', () => {
  it('streams drafts under one id and never creates a message, so the final answer is sent once by the caller', async () => {
    const egress = recordingEgress(false);
    expect(canDraft(egress, 'telegram', 'dm')).toBe(true);
    expect(canDraft(egress, 'telegram', 'group')).toBe(false);
    const text = { value: 'Hello' };
    const p = preview(egress, text);
    p.touch();
    await vi.waitFor(() => expect(egress.calls).toEqual(['draft id Hello']));
    text.value = 'Hello world';
    p.touch();
    await vi.waitFor(() => expect(egress.calls).toEqual(['draft id Hello', 'draft id Hello world']));
    p.freeze();
    expect(p.id).toBeNull();
  });

  it('settling a draft (interim text before tool calls) stops it and leaves the text to the caller, which sends it as a message', async () => {
    const egress = recordingEgress(false);
    const text = { value: 'Let me look' };
    const p = preview(egress, text);
    p.touch();
    await vi.waitFor(() => expect(egress.calls).toEqual(['draft id Let me look']));
    expect(p.settle('Let me look that up.')).toBe(false);
    text.value = 'more';
    p.touch();
    expect(p.id).toBeNull();
    expect(egress.calls).toEqual(['draft id Let me look']);
  });

  it('a refused draft (404) falls back to a message edited in place, and later turns edit in place straight away', async () => {
    const egress = recordingEgress(true);
    const text = { value: 'Partial' };
    const p = preview(egress, text);
    p.touch();
    await vi.waitFor(() => expect(p.id).toBe('77'));
    expect(egress.calls).toEqual(['send Partial']);
    expect(canDraft(recordingEgress(false), 'telegram', 'dm')).toBe(false);
  });
});
