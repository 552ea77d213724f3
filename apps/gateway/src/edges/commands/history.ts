/**
 * Commands that rewrite the transcript: /retry, /undo, /compress. Each holds the session lock while it rewrites
 * (features/sessions/session-hold.ts), so it never races a turn reading or appending the same history.
 */
import type { StoredMessage } from '@herald/agent-core';
import { payloadFrom } from '../../queue/producer.js';
import { attachmentOf } from '../../features/media/prepare.js';
import { flushOutsideTurn } from '../../turn/memory-flush.js';
import { spendOutsideTurn } from '../../turn/outside-spend.js';
import { autoCompressIfNeeded, contextWindowOf, MIN_MESSAGES_TO_COMPRESS, TOO_SHORT_NOTICE } from '../../turn/auto-compress.js';
import { openSession, type CommandDeps, type CommandInput } from './context.js';
import { preview } from './format.js';
import { BUSY_REPLY } from './registry.js';
import { withSessionHeld } from '../../features/sessions/session-hold.js';
import { ReplicationPendingError } from '../../queue/replica-wait.js';

/** Owner names of the session lock while a command rewrites the transcript (no worker starts a turn meanwhile). */
const LOCK_OWNER = { retry: 'command:retry', undo: 'command:undo', compress: 'command:compress' } as const;

/**
 * The user message that opened the last exchange: the first user message of the last turn (a turn may hold a
 * steering message too), or the last user message of history written without turn ids.
 */
function lastExchangeStart(messages: readonly StoredMessage[]): StoredMessage | null {
  const lastUser = messages.findLast((m) => m.role === 'user');
  if (!lastUser) return null;
  if (lastUser.turnId === null) return lastUser;
  return messages.find((m) => m.role === 'user' && m.turnId === lastUser.turnId && m.sessionId === lastUser.sessionId) ?? lastUser;
}

export async function retryCommand(deps: CommandDeps, { msg, sessionKey, profile }: CommandInput): Promise<string | null> {
  const held = await withSessionHeld(deps.mailbox, sessionKey, LOCK_OWNER.retry, async () => {
    const s = await openSession(deps, sessionKey);
    const start = s ? lastExchangeStart(await deps.store.getMessages(s.id)) : null;
    if (!s || !start || (!start.content && !start.attachments?.length)) return 'Nothing to retry yet.';
    // The /retry message itself carries the question again: its own id keeps the job unique. Its turn starts once
    // this command lets go of the session. The files go with it: what was read from them is in the stored text, and
    // its images are fetched again to be shown once more (features/media/prepare.ts).
    // The exchange is removed once this run appended the question (even one a replica has not confirmed yet): a
    // failed hand-over runs the command again, whose append is then a duplicate, which removes nothing more.
    const files = start.attachments ?? [];
    const submitted = deps.producer.submit(
      sessionKey,
      {
        ...payloadFrom(msg, profile.name),
        text: start.content ?? '',
        quoted: undefined,
        ...(files.length > 0 && { attachments: files.map(attachmentOf), mediaInText: true }),
      },
      'queue',
    );
    const res = await submitted.catch(async (err: unknown) => {
      if (err instanceof ReplicationPendingError && err.appended) await deps.store.deleteMessagesFrom(s.id, start.id);
      throw err;
    });
    if (res.status === 'full') return 'The queue is full; nothing was retried.';
    if (res.status === 'queued') await deps.store.deleteMessagesFrom(s.id, start.id);
    return null; // the answer is the reply
  });
  return held.held ? held.value : BUSY_REPLY;
}

export async function undoCommand(deps: CommandDeps, { sessionKey }: CommandInput): Promise<string> {
  const held = await withSessionHeld(deps.mailbox, sessionKey, LOCK_OWNER.undo, async () => {
    const s = await openSession(deps, sessionKey);
    const start = s ? lastExchangeStart(await deps.store.getMessages(s.id)) : null;
    if (!s || !start) return 'Nothing to undo.';
    const removed = await deps.store.deleteMessagesFrom(s.id, start.id);
    const after = removed - 1;
    return `↩️ Removed your last message “${preview(start.content)}”${after > 0 ? ` and ${after === 1 ? 'the reply' : `${after} messages after it`}` : ''}.`;
  });
  return held.held ? held.value : BUSY_REPLY;
}

export async function compressCommand(deps: CommandDeps, { sessionKey }: CommandInput): Promise<string> {
  const s = await openSession(deps, sessionKey);
  if (!s || s.messageCount < MIN_MESSAGES_TO_COMPRESS) return TOO_SHORT_NOTICE;
  const services = deps.conversation;
  const ref = s.model ?? services.config.model;
  if (!ref) return 'No model is configured to write the summary (HERALD_MODEL).';
  let provider: ReturnType<typeof services.models.provider>;
  try {
    provider = services.models.provider(ref);
  } catch {
    return `⚠️ ${ref} cannot be used to summarise here. Pick another with /model.`;
  }
  // The window is the conversation model's; the summary is written by the side-task chain (the auxiliary model first).
  const summarizer = services.sideTasks.forSession(s.model, 'compression') ?? provider;
  // The summary call takes seconds: hold the session so no turn starts on the history being replaced; a lost lock
  // aborts the summary call before anything is written.
  const held = await withSessionHeld(deps.mailbox, sessionKey, LOCK_OWNER.compress, async (signal) => {
    // The summary call is priced like a turn's (turn/outside-spend.ts): its tokens are written into the
    // compressed session with the summary, its cost and the budgets when it settles; into the old session when
    // the compression did not happen.
    let into = s;
    const { spend, meter } = spendOutsideTurn(deps.store, services, s, () => into.id);
    try {
      await services.windows.refresh(true);
      const r = await autoCompressIfNeeded({
        store: deps.store,
        sessionKey,
        session: s,
        provider: meter.provider(summarizer),
        contextWindow: contextWindowOf(provider, services.config.contextWindow, services.windows),
        log: deps.log,
        force: true,
        signal,
        beforeCompress: () => flushOutsideTurn(deps.store, services, s, 'compression', deps.log),
      });
      if (r.compressed) {
        into = r.session;
        spend.tokensCounted();
        deps.onCompressed?.('command');
      }
      return [r.notice, r.warning].filter(Boolean).join('\n') || 'Nothing to compress.';
    } finally {
      await spend
        .settle()
        .catch((err: unknown) => deps.log.warn({ err, sessionId: into.id }, 'the compression summary ran but its spend could not be recorded'));
    }
  });
  return held.held ? held.value : BUSY_REPLY;
}
