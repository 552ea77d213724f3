/**
 * Stage 3 — finish: what the loop produced becomes the reply to record — the model's answer (or the short error
 * text; with the turn's reasoning above it when /reasoning is on), the files send_file queued during the turn, the
 * pictures taken out of the answer's Markdown (out/reply-pictures.ts) and, when the conversation has /voice on and a
 * speech model is configured, the answer as a voice reply (a voice reply that cannot be made leaves the text with a
 * one-line note saying so; the answer is never lost) — and the delivery check is made before the record, so that a
 * reply that may go out is claimed for sending by the same write (out/send-reply.ts).
 */
import type { PlatformEgress } from '@herald/adapters';
import type { ChatMessage, ConversationResult, NewTurnFile, Session } from '@herald/agent-core';
import type { DeliveryCheck } from '../../queue/mailbox.js';
import { takePicturesFromReply } from '../../out/reply-pictures.js';
import { ReplyFiles } from '../../out/reply-files.js';
import { checkBeforeRecord } from '../../out/send-reply.js';
import type { OutboundServices } from '../../out/services.js';
import { voiceNote } from '../../out/voice-note.js';
import { cacheCollapse } from '../../features/llm/cache-health.js';
import type { ModelCall } from '../../features/budgets/meter.js';
import type { Logger } from '../../support/logger.js';
import { userFacingError } from '../user-errors.js';
import type { TurnDeps } from './deps.js';
import type { OpenTurn } from './open.js';
import type { LoopPlan } from './plan.js';
import type { PreparedTurn } from './prepare.js';

export interface FinishedTurn {
  reply: string;
  files: NewTurnFile[];
  /** The call that made the voice reply, priced with the turn's (already on its meter). */
  speech: ModelCall | null;
  /** Null: Redis could not answer the check just now (the reply is recorded unclaimed, the send checks again). */
  check: DeliveryCheck | null;
  /** API calls of the turn: the loop's (answered or not), reading the files, the voice reply. */
  apiCalls: number;
}

export async function finishTurn(deps: TurnDeps, open: OpenTurn, prepared: PreparedTurn, plan: LoopPlan, result: ConversationResult): Promise<FinishedTurn> {
  const { ctx } = open;
  // The /reasoning switch is read only when there is reasoning to show (one read less per message otherwise).
  const showReasoning = hasReasoning(result.newMessages) && (await deps.conversation.reasoning.isOn(ctx.sessionKey));
  const { reply, files, speech } = await finishReply(deps.outbound, {
    result,
    files: plan.replyFiles(),
    sessionKey: ctx.sessionKey,
    egress: open.egress,
    signal: ctx.signal,
    log: ctx.log,
    showReasoning,
  });
  if (speech) prepared.meter.add(speech);
  // A compression (before or inside the turn) starts a new prefix: a cold cache there is expected. A session that
  // never read from the cache cannot have seen its hit rate collapse (a healthy rate needs reads): nothing to compare.
  if (prepared.compressions === 0 && !result.compactedHistory && prepared.before.cacheReadTokens > 0) warnOnCacheCollapse(prepared.before, result, ctx.log);
  const check = await checkBeforeRecord(ctx);
  const apiCalls = result.apiCalls + prepared.media.calls.length + (speech ? 1 : 0);
  return { reply, files, speech, check, apiCalls };
}

/** A session whose prompt cache stopped hitting costs several times more per turn: the operator should know. */
function warnOnCacheCollapse(before: Session, result: ConversationResult, log: Logger): void {
  const collapse = cacheCollapse(before, result.usage);
  if (!collapse) return;
  log.warn(
    { sessionId: before.id, model: result.model, hitRateBefore: Number(collapse.before.toFixed(2)), hitRateNow: Number(collapse.now.toFixed(2)) },
    'prompt cache hit rate collapsed for this session (model switched, or the prompt prefix changed)',
  );
}

/** The text of a reply that is nothing but files. */
const FILES_ONLY_TEXT = '📎';
export const NO_ANSWER_TEXT = '(no answer)';

export interface FinishReplyInput {
  result: ConversationResult;
  /** What the loop queued (null: nothing); pictures and a voice reply are added here. */
  files: ReplyFiles | null;
  sessionKey: string;
  egress: PlatformEgress;
  signal: AbortSignal;
  log: Logger;
  /** The conversation has /reasoning on: the turn's thinking goes above the answer. */
  showReasoning?: boolean;
}

export interface FinishedReply {
  reply: string;
  files: NewTurnFile[];
  /**
   * The call to the speech model (the voice reply), when it gave one: counted in the session's API calls and priced
   * with the turn's own.
   */
  speech: ModelCall | null;
}

export async function finishReply(services: OutboundServices, input: FinishReplyInput): Promise<FinishedReply> {
  const { result, signal, log } = input;
  // The reply's files, made when the first one comes (most replies carry none).
  let queued = input.files;
  const files = (): ReplyFiles => (queued ??= new ReplyFiles(services.limits));
  const taken = (): NewTurnFile[] => (queued ? [...queued.files] : []);
  if (result.error) return { reply: withError(result.finalResponse, userFacingError(result.error.kind)), files: taken(), speech: null };
  let reply = result.finalResponse;
  // The HTTP API answers with text only: a picture stays in it as the Markdown image the client can show.
  if (services.replyPictures && input.egress.platform !== 'api' && reply.includes('![')) {
    reply = await takePicturesFromReply({ text: reply, files: files(), limits: services.limits, fetch: services.fetch, signal, log });
  }
  const spoken = reply.trim() !== '';
  if (!spoken) reply = taken().length > 0 ? FILES_ONLY_TEXT : noAnswerText(result);
  // Voice replies speak the answer only; the shown text may start with the reasoning.
  const shown = input.showReasoning ? withReasoning(reply, result.newMessages) : reply;
  // The per-turn look-up happens only where voice replies exist at all.
  if (spoken && services.speech && (await services.voice.isOn(input.sessionKey))) {
    try {
      const note = await voiceNote(reply, input.egress.voiceFormat, services.speech, services.limits.file.maxBytes, signal);
      files().addVoice(note.file);
      return { reply: shown, files: taken(), speech: note.call };
    } catch (err) {
      // Interrupted meanwhile: the reply is stale and will not be sent (send-reply.ts); nothing to add.
      if (signal.aborted) return { reply: shown, files: taken(), speech: null };
      const why = err instanceof Error ? err.message : String(err);
      log.warn({ err: why, model: services.speech.model }, 'voice reply failed; sending the text alone');
      return { reply: `${shown}\n\n_(🔇 No voice reply this time: the speech service failed.)_`, files: taken(), speech: null };
    }
  }
  return { reply: shown, files: taken(), speech: null };
}

/** Text the model wrote before the error is kept (the user may have seen it streaming), the error below it. */
function withError(text: string, error: string): string {
  return text.trim() === '' ? error : `${text}\n\n${error}`;
}

/** Why there is no answer, when the loop knows (the output or iteration limit, a content filter). */
function noAnswerText(result: ConversationResult): string {
  return result.partial ? `${NO_ANSWER_TEXT.slice(0, -1)}: ${result.partial})` : NO_ANSWER_TEXT;
}

// The reasoning shown above an answer when a conversation has /reasoning on: the thinking of this turn's replies,
// as a quote, cut to a readable length. Without /reasoning on it is never shown.

/** Reasoning longer than this is cut (the start is kept: that is where the plan is). */
export const REASONING_VIEW_MAX_CHARS = 3000;

const reasoned = (m: ChatMessage): boolean => m.role === 'assistant' && Boolean(m.reasoning?.trim());

/** Whether the turn's replies carry any reasoning to show (when none does, the /reasoning switch need not be read). */
export function hasReasoning(turnMessages: readonly ChatMessage[]): boolean {
  return turnMessages.some(reasoned);
}

/** The turn's reasoning as a quote block followed by the answer; the answer alone when there was none. */
export function withReasoning(answer: string, turnMessages: readonly ChatMessage[]): string {
  const thinking = turnMessages
    .filter(reasoned)
    .map((m) => (m.reasoning ?? '').trim())
    .join('\n\n');
  if (thinking === '') return answer;
  const cut = thinking.length > REASONING_VIEW_MAX_CHARS ? `${thinking.slice(0, REASONING_VIEW_MAX_CHARS - 1)}…` : thinking;
  const quoted = cut
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
  return `💭 Reasoning:\n${quoted}\n\n${answer}`;
}
