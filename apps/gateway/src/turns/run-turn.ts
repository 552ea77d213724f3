/**
 * One turn: the messages a worker took from a session's mailbox → the agent loop → SQLite → the platform.
 *
 * The outbox (`turns` table) makes a re-run after a crash safe: a turn already delivered is skipped, a turn whose
 * reply was recorded but not delivered is delivered without asking the LLM again, and messages are persisted
 * under the turn id so persisting the same turn twice writes each message once.
 */
import { buildSessionSystemPrompt, providerLabel, runConversation, type AgentEvent, type Session, type ConversationResult, type Provider, type SessionSource, type SessionStore, type TurnStatus } from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import type { MailboxEntry, TurnPayload } from '../queue/mailbox.js';
import { TurnAbort, type TurnResult, type TurnRunner } from '../queue/worker.js';
import { deliver } from './delivery.js';
import type { AgentRuntime } from './agent-runtime.js';
import { replyOnFailure } from './user-errors.js';
import { LiveTurn } from './progress.js';
import type { ConversationServices } from '../sessions/services.js';
import { compressBeforeTurn, persistTurn } from './auto-compress.js';
import { flushBeforeLoopCompression, flushBeforeLosingDetails } from './memory-flush.js';
import { showTurnProgress } from './turn-reactions.js';
import { statusReactionsFor } from '../config/progress.js';
import { withTurnTools, type TurnToolsFactory } from './tools.js';
import { retryThroughStoreOutage, untilStored } from './store-patience.js';
import { checkBeforeRecord, sendReply, type CheckedReply, type SendOutcome } from './send-reply.js';
import { finishReply } from './finish-reply.js';
import { hasReasoning } from './reasoning-view.js';
import { ReplyFiles } from '../outbound/reply-files.js';
import type { OutboundServices } from '../outbound/services.js';
import { prepareTurnMedia, type TurnMedia } from '../media/prepare.js';
import type { MediaServices } from '../media/services.js';
import { scheduleSessionKey } from '../schedules/store.js';
import type { ReactionTarget } from './turn-reactions.js';
import { cacheCollapse } from '../llm/cache-health.js';
import type { Logger } from '../logger.js';
import type { ProfileRuntimes } from './profile-runtimes.js';
import type { TeamControls } from './team-controls.js';
import { meterFor, SpendMeter } from '../budgets/meter.js';
import { settlingSpend, TurnSpend } from '../budgets/turn-spend.js';
import { PriceTable } from '../budgets/prices.js';
import { DEFAULT_PROFILE, profileColumn } from '../profiles/names.js';
import { withPrepGate, withTurnSlot } from './admission.js';
import type { PrepGate } from './prep-gate.js';
import { autoTitleEnabled, titleNewSession } from '../llm/auto-title.js';
import { composeUserMessage } from './compose.js';

export interface TurnDeps {
  store: SessionStore;
  /** Null when no model is configured: turns answer with a setup hint. */
  agent: AgentRuntime | null;
  /** Egress by platform; built lazily so a worker needs no platform connection. */
  egress: (platform: string, account?: string) => PlatformEgress;
  /** Delivery backoff base; tests shrink it. */
  deliveryBaseDelayMs?: number;
  /** The agent's built-in tools (turns/tools.ts); none when absent. */
  tools?: TurnToolsFactory;
  /** Progress and streaming settings, per-session models, counters (sessions/services.ts). */
  conversation?: ConversationServices;
  /** Counts a reply a platform without duplicate protection may have got twice (ops/metrics.ts). */
  onPossibleDuplicate: (platform: string) => void;
  /** Files and voice replies the reply carries (outbound/services.ts). */
  outbound: OutboundServices;
  /** Fetching and reading the files users send (media/services.ts). */
  media: MediaServices;
  /**
   * Where a message's platform takes the agent's events live (the HTTP API streams them to its client): that
   * relay, or null. Such a platform gets no typing, tool-progress or streamed-edit display of its own.
   */
  relay?: (payload: TurnPayload) => ((event: AgentEvent) => void) | null;
  /** Each agent profile's agent and tools (turns/profile-runtimes.ts); absent: `agent` and `tools` serve every turn. */
  profiles?: ProfileRuntimes;
  /** Cost per call, budgets, concurrency limits (turns/team-controls.ts); absent: none of them. */
  controls?: TeamControls;
  /** How many turns prepare their first model request at once (turns/prep-gate.ts); absent: no limit. */
  prepGate?: PrepGate;
}

/** Without team controls: the built-in price table, for the session's estimated cost. */
const BUILT_IN_PRICES = new PriceTable({});
/** The outbox status a send leaves behind; unknown (read back by the metrics) when there was nothing to send. */
const STATUS_AFTER_SEND: Record<SendOutcome, TurnStatus | undefined> = { delivered: 'delivered', stale: 'interrupted', 'lock lost': 'replied', 'nothing to send': undefined };
export const NO_MODEL_REPLY = 'No model is configured yet: set HERALD_MODEL (for example openai:gpt-4.1-mini) and restart Herald.';

export function createTurnRunner(deps: TurnDeps): TurnRunner {
  // A database outage is waited out (turns/store-patience.ts); any other exception still ends in one short reply
  // (turns/user-errors.ts).
  // A turn's spend is recorded once however it ends (budgets/turn-spend.ts).
  const spendDeps = { store: deps.store, budgets: deps.controls?.budgets };
  return retryThroughStoreOutage(replyOnFailure(deps, withTurnSlot(deps.controls, withPrepGate(deps.prepGate, settlingSpend(spendDeps, async (ctx, spend) => {
    const first = ctx.entries[0].payload;
    const last = ctx.entries[ctx.entries.length - 1].payload;
    const { store } = deps;
    // The profile the message was routed to: its model, prompt, tools and notes.
    const chosen = deps.profiles?.of(first.profile);
    const agent = chosen ? chosen.agent : deps.agent;
    const tools = chosen ? chosen.tools : deps.tools;
    // A scheduled task with a session of its own keeps its transcript there; the lock is still the chat's.
    const sessionKey = first.scheduled?.session === 'own' ? scheduleSessionKey(ctx.sessionKey, first.scheduled.id) : ctx.sessionKey;
    // The session (one indexed read when it exists; its fields are built only to create it), then the outbox row
    // under this worker's fence.
    let { session } = await store.getOrCreateSession(sessionKey, () => ({
      source: first.platform as SessionSource,
      userId: first.userId,
      userName: first.userName,
      chatId: first.chatId,
      profile: profileColumn(first.profile ?? DEFAULT_PROFILE),
      model: agent ? providerLabel(agent.primary) : undefined,
      // Built once, stored, replayed byte-identical every call: the prompt cache depends on it.
      systemPrompt: agent
        ? buildSessionSystemPrompt(agent.systemPrompt, { platform: first.platform, chatType: last.chatType, startedAt: new Date(), timeZone: deps.conversation?.config.timezone })
        : undefined,
    }));
    const turn = await store.beginTurn(ctx.turnId, session.id, ctx.fence);
    if (turn.status === 'delivered' || turn.status === 'interrupted' || turn.status === 'failed') {
      ctx.log.info({ status: turn.status }, 'turn already finished; not running it again');
      return { report: { finishedBefore: true } };
    }
    const egress = deps.egress(first.platform, first.account);
    // 👀 on the user's messages while this turn runs, ⚙️ with tools, ✅/⚠️ once answered (turns/turn-reactions.ts).
    const emoji = statusReactionsFor(deps.conversation?.progress, first.platform, egress);
    const progress = showTurnProgress(egress, emoji, reactionTargets(ctx.entries), ctx.log);
    const relay = deps.relay?.(last) ?? null;
    // Typing, tool progress, status lines and streaming (turns/progress.ts).
    const live = new LiveTurn({
      egress,
      conversationId: last.conversationId,
      platform: first.platform,
      chatType: last.chatType,
      replyTo: last.platformMessageId,
      settings: relay ? undefined : deps.conversation?.progress,
      signal: ctx.signal,
      canDeliver: ctx.canDeliver,
      log: ctx.log,
      deliveryBaseDelayMs: deps.deliveryBaseDelayMs,
      // A re-run writes into the message an earlier run streamed into, rather than posting a second one.
      streamMessageId: turn.streamMessageId,
      onStreamCreated: (id) => untilStored(() => store.recordStreamMessage(ctx.turnId, ctx.fence, id), ctx.log, 'record the streamed message').then(() => undefined),
    });
    const target = {
      store,
      egress,
      ctx,
      live,
      conversationId: last.conversationId,
      replyTo: last.platformMessageId,
      deliveryBaseDelayMs: deps.deliveryBaseDelayMs,
      onPossibleDuplicate: deps.onPossibleDuplicate,
      sendAttemptsAtBegin: turn.sendAttempts,
    };
    // Compressed child sessions this turn moved to (before it, or inside the loop): reported for metrics.
    let compressions = 0;
    // The reply goes out; the reaction swap waits until the session is free again (TurnResult.afterAck).
    const send = async (text: string, failed = false, checked?: CheckedReply): Promise<TurnResult> => {
      const outcome = await sendReply(target, text, checked);
      const report = { status: STATUS_AFTER_SEND[outcome], compressions };
      if (outcome !== 'delivered') {
        await live.close();
        return { afterAck: () => progress.clear(), report };
      }
      return { afterAck: () => progress.done(failed), report };
    };

    if (turn.status === 'replied' && turn.reply !== null) {
      ctx.log.info('reply was recorded before a restart; delivering it without a new LLM call');
      return send(turn.reply);
    }
    if (!agent) {
      await store.recordReply(ctx.turnId, NO_MODEL_REPLY, ctx.fence);
      return send(NO_MODEL_REPLY);
    }
    // A used-up budget answers instead of the model (admins are exempt). The message is kept in the conversation
    // with the refusal as its answer, so /retry runs it once the budget is reset.
    const spender = { profile: first.profile ?? DEFAULT_PROFILE, platform: first.platform, userId: first.userId };
    const refusal = (await deps.controls?.budgets.refusal(spender)) ?? null;
    if (refusal !== null) {
      ctx.log.info({ profile: spender.profile }, 'budget used up; turn refused');
      const ofTurn = { turnId: ctx.turnId };
      await store.transaction(async () => {
        await store.appendMessages(session.id, [{ role: 'user', content: composeUserMessage(ctx.entries, []) }], { ...ofTurn, platformMessageId: last.platformMessageId });
        await store.appendMessages(session.id, [{ role: 'assistant', content: refusal }], { ...ofTurn, firstSeq: 1 });
        await store.recordReply(ctx.turnId, refusal, ctx.fence);
      });
      return send(refusal);
    }

    // Each call priced with the model that answered (budgets/meter.ts), under the global LLM cap when one is set;
    // the compression summary below included.
    const newMeter = (): SpendMeter => (deps.controls ? meterFor(deps.controls, spender.profile) : new SpendMeter(BUILT_IN_PRICES));
    const meter = spend.track(newMeter(), spender, () => session.id);
    const governed = <T extends { primary: Provider; fallbacks: Provider[] }>(p: T): T => meter.wrap(deps.controls ? deps.controls.capped(p) : p);
    // Hermes' 85 % safety net: a session that outgrew the window moves to a compressed child session first.
    const notify = async (text: string): Promise<void> => void (await deliver(egress, last.conversationId, text, { baseDelayMs: deps.deliveryBaseDelayMs }));
    const services = deps.conversation;
    const current = session;
    // Summaries run on the side-task chain (the auxiliary model first, when one is set).
    const sideSummarizer = services?.sideTasks.forSession(session.model) ?? null;
    const summarizer = sideSummarizer ? meter.provider(sideSummarizer) : null;
    // What other workers learnt about context windows since this one last looked.
    await services?.windows.refresh();
    session = await compressBeforeTurn({
      store,
      sessionKey,
      session,
      agent: governed(agent),
      summarizer,
      windows: services?.windows,
      log: ctx.log,
      signal: ctx.signal,
      notify,
      // Saved notes survive what the summary leaves out (memory-flush.ts).
      beforeCompress: services ? () => flushBeforeLosingDetails(store, services, current, 'compression', ctx.log, (p) => meter.provider(p)) : undefined,
    });
    const compressed = session;
    if (compressed !== current) compressions++;
    spend.tokensCounted();
    // A re-run after a crash continues after the tool work its first run saved (incremental persistence).
    const { history, saved } = await store.getTurnHistory(session.id, ctx.turnId);
    live.startTyping();
    // The session's own model when /model chose one (sessions/models.ts), then the configured fallbacks.
    const chosenProviders = deps.conversation?.models.providersFor(agent, session.model) ?? agent;
    const providers = governed(chosenProviders);
    // Files are fetched and read now, on the worker (media/prepare.ts); what could not be used is said in one line each.
    const payloads = ctx.entries.map((e) => e.payload);
    const media = await prepareTurnMedia(payloads, deps.media, {
      vision: providers.primary.vision !== false,
      model: providerLabel(providers.primary),
      signal: ctx.signal,
      log: ctx.log,
    });
    // Reading them is priced with the turn's calls: each description and transcription with its own model.
    for (const call of media.calls) meter.add(call);
    // An interrupted turn says nothing about its files: the loop below sees the abort and ends it quietly.
    if (!ctx.signal.aborted && nothingToAsk(payloads, media)) {
      // Only files, and none of them usable: the notices are the whole answer; the model is not asked.
      live.stopTyping();
      const reply = media.notices.join('\n');
      // A transcription that heard nothing still cost its call: the spend so far is written with the reply.
      await store.transaction(async () => {
        await spend.write(media.calls.length);
        await store.recordReply(ctx.turnId, reply, ctx.fence);
      });
      spend.recorded();
      return send(reply);
    }
    if (media.notices.length > 0 && !ctx.signal.aborted) {
      await notify(media.notices.join('\n')).catch((err: unknown) => ctx.log.warn({ err: String(err) }, 'file notices not delivered'));
    }
    // Tools, a budget shared with subagents, saved notes in front of a session's first message, clarify questions.
    // What send_file queues during the turn; recorded with the reply, sent after its text.
    const replyFiles = new ReplyFiles(deps.outbound.limits);
    const turnTools = tools?.forTurn({ ctx, egress, payload: last, files: replyFiles });
    const userMessage = composeUserMessage(ctx.entries, history, media.blocks);
    let result: ConversationResult;
    try {
      result = await runConversation(await withTurnTools(turnTools, {
        userMessage,
        userAttachments: media.attachments,
        userImages: media.images,
        history,
        systemPrompt: session.systemPrompt ?? agent.systemPrompt,
        signal: ctx.signal,
        provider: providers.primary,
        fallbacks: providers.fallbacks,
        fallbackState: agent.fallbackState,
        maxIterations: agent.maxIterations,
        cacheKey: session.id,
        compression: {
          contextWindow: agent.contextWindow,
          thresholdRatio: services?.config.compressionThreshold,
          ...(services ? { windows: services.windows } : {}),
          // Without an auxiliary model the loop summarises with the model it is using at the time (it may have
          // fallen back from one that is down), not with the chain that starts at the primary again.
          ...(summarizer && services?.config.auxiliaryModel ? { summaryProvider: summarizer } : {}),
          // The memory-only flush runs before each compression inside the turn too (memory-flush.ts).
          beforeCompress: flushBeforeLoopCompression(store, services, session, providers.primary, ctx.signal, ctx.log, (p) => meter.provider(p)),
        },
        getSteerMessages: ctx.takeSteerMessages,
        onEvent: (event) => {
          ctx.touch(); // the worker's inactivity watchdog counts every agent event as activity
          if (event.type === 'step') ctx.prepared?.(); // the model request is going out: the next turn may prepare
          live.onEvent(event);
          if (event.type === 'tool_start') progress.tools();
          relay?.(event);
        },
        // session_search summarises with the turn's metered side-task chain (its cost is the turn's).
        toolContext: { sessionId: session.id, sessionKey, userId: first.userId, platform: first.platform, ...(summarizer && { sideProvider: summarizer }) },
        ...(saved.length > 0 ? { resume: saved } : {}),
        onCheckpoint: (messages) => store.checkpointTurn(ctx.turnId, ctx.fence, session.id, messages, { platformMessageId: last.platformMessageId }),
      }));
    } finally {
      live.stopTyping();
    }

    const abort: unknown = ctx.signal.reason;
    if (ctx.signal.aborted) {
      // Shutdown or a lost lock: another worker runs this turn again, so write nothing here but what it cost.
      if (abort instanceof TurnAbort && (abort.kind === 'shutdown' || abort.kind === 'lock_lost')) {
        await spend.settle(result.apiCalls + media.calls.length);
        return { report: { status: 'running', compressions } };
      }
      // Interrupted or stopped by the user: keep what the turn did (tool results), send nothing.
      const persisted = await store.transaction(async () => {
        // What the interrupted turn cost still counts: the session's usage and the budgets.
        const usage = { ...spend.uncountedTokens(), costUsd: meter.costUsd, apiCalls: result.apiCalls + media.calls.length, ...(result.lastPromptTokens ? { lastPromptTokens: result.lastPromptTokens } : {}) };
        const persisted = await persistTurn(store, { sessionKey, session, result, turnId: ctx.turnId, platformMessageId: last.platformMessageId, usage });
        await store.markTurn(ctx.turnId, 'interrupted', ctx.fence, abort instanceof Error ? abort.message : 'interrupted');
        await deps.controls?.budgets.record(spender, meter.usage, meter.costUsd);
        return persisted;
      });
      spend.recorded();
      await live.close();
      return { afterAck: () => progress.clear(), report: { status: 'interrupted', compressions: compressions + (persisted !== session ? 1 : 0) } };
    }

    // When the loop compressed inside the turn, the compressed history continues in a child session.
    // The answer (or a short error text), the pictures in it and a voice reply become files (turns/finish-reply.ts).
    // The /reasoning switch is read only when there is reasoning to show (one read less per message otherwise).
    const showReasoning = hasReasoning(result.newMessages) && ((await deps.conversation?.reasoning.isOn(ctx.sessionKey)) ?? false);
    const { reply, files, speech } = await finishReply(deps.outbound, { result, files: replyFiles, sessionKey: ctx.sessionKey, egress, signal: ctx.signal, log: ctx.log, showReasoning });
    if (speech) meter.add(speech);
    // Checked before the reply is recorded, so that a reply that may go out is claimed for sending by the same
    // write; a stale one, one whose session was lost, or one Redis could not check now is recorded unclaimed.
    const check = await checkBeforeRecord(ctx);
    // Messages, usage, spend and the recorded reply (with its files) commit together: a crash leaves all or none.
    let text = reply;
    const recorded = await store.transaction(async () => {
      // Tokens: every call the turn made (its loop, subagents, side tasks, its files) but a compression's before it,
      // which are in the session's columns already; the cost: all of them (budgets/turn-spend.ts).
      // API calls: the loop's (answered or not), reading the files, the voice reply.
      const usage = { ...spend.uncountedTokens(), costUsd: meter.costUsd, lastPromptTokens: result.lastPromptTokens, apiCalls: result.apiCalls + media.calls.length + (speech ? 1 : 0) };
      const persisted = await persistTurn(store, { sessionKey, session, result, turnId: ctx.turnId, platformMessageId: last.platformMessageId, usage });
      // Budgets: this turn's spend, and the 80 % notice when it crossed it (once, whichever worker is first).
      let notices: string[] = [];
      if (deps.controls) {
        await deps.controls.budgets.record(spender, meter.usage, meter.costUsd);
        notices = await deps.controls.budgets.notices(spender);
      }
      text = notices.length > 0 ? `${reply}\n\n${notices.join('\n')}` : reply;
      const turn = await store.recordReply(ctx.turnId, text, ctx.fence, files, { claim: check === 'ok' });
      return { persisted, turn };
    });
    session = recorded.persisted;
    spend.recorded();
    if (session !== compressed) compressions++;
    // A compression (before or inside the turn) starts a new prefix: a cold cache there is expected.
    if (compressed === current && !result.compactedHistory) warnOnCacheCollapse(current, result, ctx.log);
    const sent = await send(text, Boolean(result.error), { check, recorded: recorded.turn });
    if (result.error) {
      await store.markTurn(ctx.turnId, 'failed', ctx.fence, `${result.error.kind}: ${result.error.message}`);
      return { ...sent, report: { status: 'failed', compressions } };
    }
    // The first exchange of a new chat conversation names it, behind the reply (llm/auto-title.ts). Not scheduled
    // runs, not API requests (a client may send thousands, each a session of its own).
    if (services && history.length === 0 && !first.scheduled && first.platform !== 'api' && !session.title && autoTitleEnabled(services.config)) {
      const provider = services.sideTasks.forSession(session.model);
      if (provider) {
        // Priced like the turn's own calls, recorded the way calls outside a turn's messages are (turn-spend.ts):
        // the session's tokens and cost and the budgets, once the title is written; not one of its API calls.
        const titleSpend = new TurnSpend(spendDeps);
        const titled = session;
        const titleMeter = titleSpend.track(newMeter(), spender, () => titled.id);
        const title = async (): Promise<void> => {
          await titleNewSession({ store, provider: titleMeter.provider(provider), sessionId: titled.id, userText: userMessage, reply, log: ctx.log });
          await titleSpend.settle(0);
        };
        services.background.track(title().catch((err: unknown) => ctx.log.warn({ err }, 'pricing the title call failed')));
      }
    }
    return sent;
  })))), deps.store);
}

/** The user's messages a turn answers (a scheduled run has none to react to). */
function reactionTargets(entries: MailboxEntry[]): ReactionTarget[] {
  return entries.flatMap(({ payload: p }) => (p.platformMessageId ? [{ conversationId: p.conversationId, platformMessageId: p.platformMessageId }] : []));
}

/** Files only (no words), and not one of them gave the model anything: there is no question to put to it. */
function nothingToAsk(payloads: readonly TurnPayload[], media: TurnMedia): boolean {
  return media.attachments.length > 0 && !media.usable && payloads.every((p) => p.text.trim() === '');
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
