/**
 * What happens to a turn the watchdog gave up on (it ignored its abort): it loses write and send access — its
 * outbox row moves to a newer fence and ends as failed, so every later write or send of the still-running code is
 * refused (and its transcript, written with the reply, rolls back) — and the user gets a short notice instead of
 * silence.
 */
import type { PlatformEgress } from '@herald/adapters';
import type { SessionStore } from '@herald/agent-core';
import type { Mailbox } from '../queue/mailbox.js';
import type { AbandonHandler } from '../queue/worker.js';
import { deliver } from '../out/send-reply.js';

export const ABANDONED_NOTICE = '⚠️ That took too long and was stopped. Please try again.';

export function abandonTurns(deps: { store: SessionStore; mailbox: Mailbox; egress: (platform: string, account?: string) => PlatformEgress }): AbandonHandler {
  return async ({ sessionKey, turnId, entries, log }) => {
    const fence = await deps.mailbox.nextFence(sessionKey);
    if (!(await deps.store.fenceOut(turnId, fence, 'failed', 'abandoned by the watchdog'))) return;
    const last = entries[entries.length - 1].payload;
    await deliver(deps.egress(last.platform, last.account), last.conversationId, ABANDONED_NOTICE, { replyTo: last.platformMessageId, plain: true }).catch(
      (err: unknown) => log.warn({ err }, 'could not tell the user the turn was stopped'),
    );
  };
}
