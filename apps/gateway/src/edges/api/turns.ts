/**
 * The ingress side of the API: a request becomes a message in its session's mailbox, exactly as a chat message
 * does, so it goes through the same queue, workers, tools, compression and per-session order.
 *
 * Sessions: a request that names one (X-Herald-Session, else `user`) continues it from the store, with the same
 * idle and daily resets as chats, and the client's history is not needed (only its last message is read). A request
 * without one is stateless: it gets a session of its own, seeded with the history the client sent, ended once
 * answered. Session keys are `agent:main:api:dm:<key label>:<name>`, so each API key has its own sessions.
 *
 * Every request waits for a turn of its own (it is never merged with another message) and may be withdrawn: a
 * client that disconnects takes its message back, which stops its turn like /stop, or skips it if it has not run.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Session, SessionStore } from '@herald/agent-core';
import type { BuiltPrompt } from '../../features/prompt/session-prompts.js';
import type { Logger } from '../../support/logger.js';
import type { Mailbox, TurnPayload } from '../../queue/mailbox.js';
import type { ControlBus } from '../../queue/control.js';
import { jobIdFor, MAX_PENDING, type TurnProducer } from '../../queue/producer.js';
import { ReplicationPendingError } from '../../queue/replica-wait.js';
import type { UserRateLimiter } from '../ingress/inbound-guard.js';
import type { ConversationServices } from '../../features/sessions/services.js';
import { resetExpiredSession } from '../../features/sessions/reset-policy.js';
import { flushBeforeReset } from '../../turn/memory-flush.js';
import { DEFAULT_PROFILE, profileColumn } from '../../support/config/profile-names.js';
import { profileKeySegment, type Profile } from '../../features/profiles/table.js';
import { API_PLATFORM, apiConversationId } from './egress.js';
import { ApiError } from './errors.js';
import type { ApiCaller } from './keys.js';
import type { ReplyEvent, ReplyListener } from './reply-channel.js';
import type { ApiInput } from './requests.js';

const STATELESS_END_REASON = 'api_stateless';
/** How long a client whose session already has MAX_PENDING requests waiting is asked to wait. */
const SESSION_FULL_RETRY_S = 5;
const UNAVAILABLE_RETRY_S = 5;
const SAFE_NAME = /^[\w.@+-]{1,128}$/;

export interface ApiTurnsDeps {
  store: SessionStore;
  producer: TurnProducer;
  mailbox: Mailbox;
  control: ControlBus;
  listener: ReplyListener;
  conversation: ConversationServices;
  limiter: UserRateLimiter;
  log: Logger;
}

/** The model id of the profile the routes pick for API requests (HERALD_ROUTES with platform api, else the default). */
export const DEFAULT_MODEL_ID = 'herald';

export interface ApiTurn {
  requestId: string;
  session: Session;
  /** The session name the client gave, null when stateless. */
  sessionName: string | null;
  /** The client went away: take the message back (its turn stops, or never runs). */
  withdraw(): Promise<void>;
  /** The request is over: stop reading its replies (and end a stateless session). */
  close(): Promise<void>;
}

/**
 * `agent:main:api:dm:<key label>:<name>` (`main`: the profile's session-key name, support/config/profile-names.ts); names with
 * other characters are replaced by a digest.
 */
function apiSessionKey(keyLabel: string, name: string, profile: string = DEFAULT_PROFILE): string {
  const safe = SAFE_NAME.test(name) ? name : `h-${createHash('sha256').update(name).digest('hex').slice(0, 24)}`;
  return `agent:${profileKeySegment(profile)}:${API_PLATFORM}:dm:${keyLabel}:${safe}`;
}

export class ApiTurns {
  constructor(private readonly deps: ApiTurnsDeps) {}

  /**
   * Puts the request's message in its session's mailbox. Herald's own limits answer 429; Redis or the database
   * away answers 503 with Retry-After (nothing was taken, so the client can simply send it again).
   */
  async start(caller: ApiCaller, input: ApiInput, onEvents: (events: ReplyEvent[]) => void): Promise<ApiTurn> {
    try {
      return await this.submit(caller, input, onEvents);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      this.deps.log.warn({ err }, 'API request not taken: Redis or the store is unavailable');
      throw new ApiError(
        503,
        'Herald cannot take requests right now (its queue or database is unavailable); try again shortly.',
        'server_error',
        'service_unavailable',
        null,
        UNAVAILABLE_RETRY_S,
      );
    }
  }

  private async submit(caller: ApiCaller, input: ApiInput, onEvents: (events: ReplyEvent[]) => void): Promise<ApiTurn> {
    const { deps } = this;
    const requestId = randomUUID().replaceAll('-', '');
    const decision = await deps.limiter.check(API_PLATFORM, caller.keyLabel, requestId);
    if (!decision.allowed) {
      throw new ApiError(
        429,
        `Rate limit reached: ${deps.limiter.limit} requests per minute for this API key (HERALD_API_RATE_LIMIT).`,
        'rate_limit_error',
        'rate_limit_exceeded',
        null,
        decision.retryAfterMs / 1000,
      );
    }
    const chatId = input.session ?? `once.${requestId}`;
    const userId = input.user ?? caller.keyLabel;
    // The request's model names the profile; `herald` is whichever the routes pick for the API.
    const { profiles } = deps.conversation;
    const profile = input.model === DEFAULT_MODEL_ID ? profiles.route({ platform: API_PLATFORM, chatType: 'dm', chatId, userId }) : profiles.get(input.model);
    const sessionKey = apiSessionKey(caller.keyLabel, chatId, profile.name);
    const session = await this.prepareSession(sessionKey, input, userId, chatId, profile);

    deps.listener.watch(requestId, onEvents);
    const payload: TurnPayload = {
      text: input.text,
      platform: API_PLATFORM,
      conversationId: apiConversationId(requestId),
      chatType: 'dm',
      chatId,
      userId,
      platformMessageId: requestId,
      messageId: requestId,
      withdrawable: true,
      ...(profile.name !== DEFAULT_PROFILE && { profile: profile.name }),
      ...(input.attachments.length > 0 && { attachments: input.attachments }),
    };
    try {
      const res = await deps.producer.submit(sessionKey, payload, 'queue');
      if (res.status === 'full') {
        throw new ApiError(
          429,
          `This session already has ${MAX_PENDING} requests waiting; try again when some are answered.`,
          'rate_limit_error',
          'session_busy',
          null,
          SESSION_FULL_RETRY_S,
        );
      }
    } catch (err) {
      await deps.listener.unwatch(requestId);
      // Stored, but no replica confirmed it (HERALD_REDIS_WAIT_REPLICAS): the client is told to send it again (503),
      // so this copy is taken back first — it must not be answered as well.
      if (err instanceof ReplicationPendingError) await deps.mailbox.withdraw(jobIdFor(API_PLATFORM, requestId));
      throw err;
    }
    const entryId = jobIdFor(API_PLATFORM, requestId);
    let closed = false;
    return {
      requestId,
      session,
      sessionName: input.session,
      withdraw: async () => {
        await deps.mailbox.withdraw(entryId);
        await deps.control.publish({ type: 'withdraw', sessionKey, entryId });
      },
      close: async () => {
        if (closed) return;
        closed = true;
        await deps.listener.unwatch(requestId);
        if (input.session === null) await deps.store.endSession(session.id, STATELESS_END_REASON);
      },
    };
  }

  /**
   * The session the turn runs in, created here so it starts as the client asked: the session's system prompt from
   * the prompt builder's layers, as every platform's, with the client's instructions at the end of it, and
   * (stateless) the history the client sent.
   */
  private async prepareSession(sessionKey: string, input: ApiInput, userId: string, chatId: string, profile: Profile): Promise<Session> {
    const { store, conversation } = this.deps;
    // The prompt builder's layers for the API (features/prompt), the client's instructions after them.
    const promptFor = async (startedAt: Date): Promise<BuiltPrompt> => {
      const built = await conversation.prompts.buildFor(profile, API_PLATFORM, 'dm', undefined, startedAt);
      return input.system ? { ...built, text: `${built.text}\n\n${input.system}` } : built;
    };
    if (input.session !== null)
      await resetExpiredSession({ store, mailbox: this.deps.mailbox, conversation }, sessionKey, flushBeforeReset(store, conversation));
    const open = await store.currentSession(sessionKey);
    const fresh = open && open.endedAt === null ? null : await promptFor(new Date());
    const { session, created } = await store.getOrCreateSession(sessionKey, () => ({
      source: API_PLATFORM,
      userId,
      chatId,
      model: profile.model,
      systemPrompt: fresh?.text,
      profile: profileColumn(profile.name),
    }));
    if (created) {
      // A /new between the read and the creation: the new session gets its prompt now.
      const built = fresh ?? (await promptFor(new Date(session.startedAt)));
      if (!fresh) await store.setSystemPrompt(session.id, built.text);
      await conversation.prompts.record(session.id, built);
    }
    // Other instructions from the client for a running session: its prompt is rebuilt (the layers as they are now).
    if (!created && input.system !== null && !session.systemPrompt?.endsWith(`\n\n${input.system}`)) {
      const wanted = await promptFor(new Date(session.startedAt));
      if (session.systemPrompt !== wanted.text) await store.setSystemPrompt(session.id, wanted.text);
    }
    if (input.session === null && input.history.length > 0) await store.appendMessages(session.id, input.history);
    return session;
  }
}
