/**
 * Stage 1b — answers that need no model call: a reply recorded before a restart (delivered without asking the LLM
 * again), the setup hint when no model is configured, and the refusal of a used-up budget. Each is recorded (the
 * first one already was) and returned as the text to deliver; otherwise the turn asks the model.
 *
 * Stage 1c — prepare what the model is asked with: the turn's meter (every call priced, under the global cap), the
 * 85 % compression before the turn, the history (with tool work an earlier run saved), the providers and the
 * user's files read. A turn of files only, none of them usable, is answered here with the notices alone. And the
 * user message a turn puts to the model, composed from the mailbox entries it answers (composeUserMessage).
 */
import { providerLabel, type ChatMessage, type Provider, type Session } from '@herald/agent-core';
import type { MailboxEntry, TurnPayload } from '../../queue/mailbox.js';
import type { AgentRuntime } from '../agent-runtime.js';
import { compressBeforeTurn } from '../auto-compress.js';
import { deliver } from '../../out/send-reply.js';
import { flushBeforeLosingDetails } from '../memory-flush.js';
import { prepareTurnMedia, type TurnMedia } from '../../features/media/prepare.js';
import { meterFor, type SpendMeter, type TurnSpend } from '../../features/budgets/meter.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';

const QUOTE_MAX_CHARS = 500;
const NO_MODEL_REPLY = 'No model is configured yet: set HERALD_MODEL (for example openai:gpt-4.1-mini) and restart Herald.';

/** The text to deliver without asking the model, or the agent that is to be asked. */
export type EarlyAnswer = { answer: string } | { agent: AgentRuntime };

export async function answerWithoutModel(deps: TurnDeps, open: OpenTurn): Promise<EarlyAnswer> {
  const { store } = deps;
  const { ctx, row, session, last } = open;
  if (row.status === 'replied' && row.reply !== null) {
    ctx.log.info('reply was recorded before a restart; delivering it without a new LLM call');
    return { answer: row.reply };
  }
  const { agent } = open;
  if (!agent) {
    await store.recordReply(ctx.turnId, NO_MODEL_REPLY, ctx.fence);
    return { answer: NO_MODEL_REPLY };
  }
  // A used-up budget answers instead of the model (admins are exempt). The message is kept in the conversation
  // with the refusal as its answer, so /retry runs it once the budget is reset.
  const refusal = await deps.controls.budgets.refusal(open.spender);
  if (refusal === null) return { agent };
  ctx.log.info({ profile: open.spender.profile }, 'budget used up; turn refused');
  const ofTurn = { turnId: ctx.turnId };
  await store.transaction(async () => {
    await store.appendMessages(session.id, [{ role: 'user', content: composeUserMessage(ctx.entries, []) }], {
      ...ofTurn,
      platformMessageId: last.platformMessageId,
    });
    await store.appendMessages(session.id, [{ role: 'assistant', content: refusal }], { ...ofTurn, firstSeq: 1 });
    await store.recordReply(ctx.turnId, refusal, ctx.fence);
  });
  return { answer: refusal };
}

interface Providers {
  primary: Provider;
  fallbacks: Provider[];
}

export interface PreparedTurn {
  agent: AgentRuntime;
  /** The turn's meter (tracked by its TurnSpend), and how to make another one like it (the title's). */
  meter: SpendMeter;
  newMeter: () => SpendMeter;
  /** Compression summaries run on the compression side-task chain, metered; null when there is none. */
  summarizer: Provider | null;
  /** session_search summaries run on the search side-task chain, metered; null when there is none. */
  searchSummarizer: Provider | null;
  /** The session before the turn's compression, and the one it runs in (the compressed child when that ran). */
  before: Session;
  session: Session;
  /** 1 when the compression before the turn moved the conversation to a child session. */
  compressions: number;
  history: ChatMessage[];
  /** Tool work an earlier run of this turn saved (incremental persistence): the loop resumes after it. */
  saved: ChatMessage[];
  /** The session's chain of models, metered and capped. */
  providers: Providers;
  payloads: TurnPayload[];
  media: TurnMedia;
  /** Says one short line in the chat (best effort). */
  notify: (text: string) => Promise<void>;
}

export async function prepareTurn(deps: TurnDeps, open: OpenTurn, agent: AgentRuntime, spend: TurnSpend): Promise<PreparedTurn> {
  const { store, conversation: services } = deps;
  const { ctx } = open;
  let session = open.session;
  // Each call priced with the model that answered (features/budgets/meter.ts), under the global LLM cap when one is set;
  // the compression summary below included.
  const newMeter = (): SpendMeter => meterFor(deps.controls, open.spender.profile);
  const meter = spend.track(newMeter(), open.spender, () => session.id);
  const governed = <T extends Providers>(p: T): T => meter.wrap(deps.controls.capped(p));
  const notify = async (text: string): Promise<void> =>
    void (await deliver(open.egress, open.last.conversationId, text, { baseDelayMs: deps.deliveryBaseDelayMs }));
  const before = session;
  // Summaries run on the side-task chain (the auxiliary model first, when one is set).
  const sideSummarizer = services.sideTasks.forSession(session.model, 'compression');
  const summarizer = sideSummarizer ? meter.provider(sideSummarizer) : null;
  const sideSearch = services.sideTasks.forSession(session.model, 'search');
  const searchSummarizer = sideSearch ? meter.provider(sideSearch) : null;
  // What other workers learnt about context windows since this one last looked.
  await services.windows.refresh();
  // Hermes' 85 % safety net: a session that outgrew the window moves to a compressed child session first.
  session = await compressBeforeTurn({
    store,
    sessionKey: open.sessionKey,
    session,
    agent: governed(agent),
    summarizer,
    windows: services.windows,
    log: ctx.log,
    signal: ctx.signal,
    notify,
    // Saved notes survive what the summary leaves out (memory-flush.ts).
    beforeCompress: () => flushBeforeLosingDetails(store, services, before, 'compression', ctx.log, (p) => meter.provider(p)),
  });
  spend.tokensCounted();
  // A re-run after a crash continues after the tool work its first run saved (incremental persistence). Read with the
  // turn's begin when the store could (nothing has written to the session since); read now after a compression.
  const { history, saved } = session === open.session && open.history ? open.history : await store.getTurnHistory(session.id, ctx.turnId);
  open.live.startTyping();
  // The session's own model when /model chose one (features/sessions/models.ts), then the configured fallbacks.
  const providers = governed(services.models.providersFor(agent, session.model));
  // Files are fetched and read now, on the worker (features/media/prepare.ts); what could not be used is said in one line each.
  // The user's files read (for a turn without files: nothing to fetch, an empty block per message).
  const payloads = ctx.entries.map((e) => e.payload);
  const media = await prepareTurnMedia(payloads, deps.media, {
    vision: providers.primary.vision !== false,
    model: providerLabel(providers.primary),
    signal: ctx.signal,
    log: ctx.log,
  });
  // Reading them is priced with the turn's calls: each description and transcription with its own model.
  for (const call of media.calls) meter.add(call);
  const compressions = session !== before ? 1 : 0;
  return { agent, meter, newMeter, summarizer, searchSummarizer, before, session, compressions, history, saved, providers, payloads, media, notify };
}

/**
 * Only files, and none of them usable: the notices are the whole answer and the model is not asked (recorded with
 * the spend so far: a transcription that heard nothing still cost its call). Else the notices are said up front.
 * An interrupted turn says nothing about its files: the loop sees the abort and ends it quietly.
 */
export async function answerFromFiles(deps: TurnDeps, open: OpenTurn, prepared: PreparedTurn, spend: TurnSpend): Promise<string | null> {
  const { ctx } = open;
  const { media } = prepared;
  if (!ctx.signal.aborted && nothingToAsk(prepared.payloads, media)) {
    open.live.stopTyping();
    const reply = media.notices.join('\n');
    await deps.store.transaction(async () => {
      await spend.write(media.calls.length);
      await deps.store.recordReply(ctx.turnId, reply, ctx.fence);
    });
    spend.recorded();
    return reply;
  }
  if (media.notices.length > 0 && !ctx.signal.aborted) {
    await prepared.notify(media.notices.join('\n')).catch((err: unknown) => ctx.log.warn({ err: String(err) }, 'file notices not delivered'));
  }
  return null;
}

/** Files only (no words), and not one of them gave the model anything: there is no question to put to it. */
function nothingToAsk(payloads: readonly TurnPayload[], media: TurnMedia): boolean {
  return media.attachments.length > 0 && !media.usable && payloads.every((p) => p.text.trim() === '');
}

/**
 * The user message of a turn: merged texts, with reply-to context when the quoted message is not in history, and
 * after each text what its files became (`mediaBlocks[i]` for entry i: image notes, transcripts, document text).
 * The parts of a text the client split are one text again, joined by a line break (where the client cut it).
 */
export function composeUserMessage(entries: MailboxEntry[], history: ChatMessage[], mediaBlocks: readonly string[][] = []): string {
  // Most turns: one message without files, whose text (and quote) is the whole of it; no sets and lists to join.
  if (entries.length === 1 && !mediaBlocks[0]?.length) return withQuote(entries[0].payload, history);
  // Messages merged from several people (a shared thread) keep who said what.
  const speakers = new Set(entries.map((e) => e.payload.userId));
  let out = '';
  entries.forEach((e, i) => {
    const text = [withQuote(e.payload, history), ...(mediaBlocks[i] ?? [])].filter(Boolean).join('\n');
    if (i > 0 && continuesText(entries[i - 1].payload, e.payload)) out += `\n${text}`;
    else out += `${i > 0 ? '\n\n' : ''}${speakers.size > 1 ? `[${e.payload.userName ?? e.payload.userId}]: ` : ''}${text}`;
  });
  return out;
}

/** `next` is the next part of the split text `prev` is a part of. */
function continuesText(prev: TurnPayload, next: TurnPayload): boolean {
  return next.partOf?.kind === 'text' && prev.partOf?.kind === 'text' && prev.partOf.id === next.partOf.id && prev.userId === next.userId;
}

function withQuote(p: TurnPayload, history: ChatMessage[]): string {
  if (!p.quoted?.text) return p.text;
  const quoted = p.quoted.text.trim();
  const known = history.some((m) => typeof m.content === 'string' && m.content.includes(quoted));
  if (known) return p.text;
  const short = quoted.length > QUOTE_MAX_CHARS ? `${quoted.slice(0, QUOTE_MAX_CHARS)}…` : quoted;
  return `[Replying to: "${short}"]\n${p.text}`;
}
