import type { PlatformEgress, StatusReactions } from '@herald/adapters';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { showTurnProgress } from './progress.js';

const log = pino({ level: 'silent' });
const SLACK_LIKE: StatusReactions = { queued: '👀', tools: '⚙️', done: '✅', error: '⚠️' };

/** A platform's REST side that records reactions the way a user would see them appear and disappear. */
function recordingEgress(failOn?: string): PlatformEgress & { seen: string[] } {
  const seen: string[] = [];
  return {
    platform: 'slack',
    maxMessageLength: 1000,
    duplicateSafety: 'none',
    typingRefreshMs: 1000,
    seen,
    send: async () => ({ messageIds: [] }),
    voiceFormat: 'mp3',
    sendFile: async () => {
      throw new Error('this test sends no files');
    },
    edit: async () => {},
    typing: async () => {},
    react: async (_conversation, messageId, emoji, remove = false) => {
      if (emoji === failOn) throw new Error('reactions are off in this channel');
      seen.push(`${messageId} ${remove ? '-' : '+'}${emoji}`);
    },
  };
}

const target = (id: string) => ({ conversationId: 'slack:D1', platformMessageId: id });

describe('turn progress reactions', () => {
  it('puts 👀 on every message of the turn at once, and swaps it for ✅ when answered', async () => {
    const egress = recordingEgress();
    const progress = showTurnProgress(egress, SLACK_LIKE, [target('1.1'), target('1.2')], log);
    await progress.done();
    await progress.done(); // a second call changes nothing
    for (const id of ['1.1', '1.2']) {
      expect(egress.seen.filter((s) => s.startsWith(id))).toEqual([`${id} +👀`, `${id} -👀`, `${id} +✅`]);
    }
  });

  it('an interrupted turn loses its 👀 and gets no ✅', async () => {
    const egress = recordingEgress();
    await showTurnProgress(egress, SLACK_LIKE, [target('2.1')], log).clear();
    expect(egress.seen).toEqual(['2.1 +👀', '2.1 -👀']);
  });

  it('does nothing when reactions are off', async () => {
    const egress = recordingEgress();
    await showTurnProgress(egress, undefined, [target('3.1')], log).done();
    expect(egress.seen).toEqual([]);
  });

  it('a reaction the platform refuses never fails the turn', async () => {
    const egress = recordingEgress('👀');
    await expect(showTurnProgress(egress, SLACK_LIKE, [target('4.1')], log).done()).resolves.toBeUndefined();
    expect(egress.seen).toEqual(['4.1 +✅']);
  });

  it('tools add ⚙️ once; a failed turn ends with ⚠️; both working reactions are taken off first', async () => {
    const egress = recordingEgress();
    const progress = showTurnProgress(egress, SLACK_LIKE, [target('5.1')], log);
    progress.tools();
    progress.tools();
    await progress.done(true);
    expect(egress.seen).toEqual(['5.1 +👀', '5.1 +⚙️', '5.1 -👀', '5.1 -⚙️', '5.1 +⚠️']);
  });

  it('a stage left empty is skipped', async () => {
    const egress = recordingEgress();
    const progress = showTurnProgress(egress, { queued: '', tools: '⚡', done: '👌', error: '😢' }, [target('6.1')], log);
    progress.tools();
    await progress.done();
    expect(egress.seen).toEqual(['6.1 +⚡', '6.1 -⚡', '6.1 +👌']);
  });
});
