/**
 * The worker side of the API: how a turn answers an HTTP request. The conversation id of an API message names the
 * request waiting for it (`api:<requestId>`), and everything goes into that request's reply stream
 * (reply-channel.ts), from whichever worker runs the turn:
 *   - the egress: the turn's reply (the send that carries the turn id as its idempotency key) and notices
 *     (a failure, an abandoned turn, a compression) — the request decides what ends it;
 *   - the relay: the agent loop's events as they happen, for streaming clients;
 *   - the end of the turn, once its mailbox entry is gone (the worker's onTurnEnd).
 */
import { BadRequestError, type PlatformEgress, type SendOptions, type SentMessage } from '@herald/adapters';
import type { AgentEvent } from '@herald/agent-core';
import type { MailboxEntry, TurnPayload } from '../../queue/mailbox.js';
import type { ReplyEvent, ReplyPublisher } from './reply-channel.js';

export const API_PLATFORM = 'api';
const CONVERSATION_PREFIX = 'api:';
/** The reply is one event whatever its length (the HTTP body limit is the client's business). */
const API_MAX_MESSAGE_LENGTH = Number.MAX_SAFE_INTEGER;

export function apiConversationId(requestId: string): string {
  return `${CONVERSATION_PREFIX}${requestId}`;
}

function requestIdOf(conversationId: string): string {
  if (!conversationId.startsWith(CONVERSATION_PREFIX)) throw new Error(`not an API conversation: ${conversationId}`);
  return conversationId.slice(CONVERSATION_PREFIX.length);
}

export function createApiEgress(publisher: ReplyPublisher): PlatformEgress {
  return {
    platform: API_PLATFORM,
    maxMessageLength: API_MAX_MESSAGE_LENGTH,
    // The waiting request takes the first reply and ignores a repeat, so a re-run's second send is harmless.
    duplicateSafety: 'idempotent',
    typingRefreshMs: 60_000,
    async send(conversationId: string, markdown: string, opts: SendOptions = {}): Promise<SentMessage> {
      // One chunk per reply: an earlier attempt that recorded it has sent everything.
      if ((opts.skipChunks ?? 0) > 0) return { messageIds: [] };
      const requestId = requestIdOf(conversationId);
      await publisher.publish(requestId, { t: 'message', text: markdown, final: opts.idempotencyKey !== undefined });
      const id = `${conversationId}:${opts.idempotencyKey ?? 'notice'}`;
      await opts.onChunkSent?.(0, id, true);
      return { messageIds: [id] };
    },
    // The OpenAI wire formats carry text: a file the agent sends is refused (the agent is told, as on any refusal).
    sendFile: async () => {
      throw new BadRequestError('the HTTP API answers with text only; files are not sent over it', API_PLATFORM);
    },
    voiceFormat: 'mp3',
    // Nothing to edit, no typing indicator and no reactions over HTTP: streaming goes through the relay.
    edit: async () => undefined,
    typing: async () => undefined,
    react: async () => undefined,
  };
}

/** The agent events a streaming client sees, as reply events; null for those it does not. */
function replyEventOf(event: AgentEvent): ReplyEvent | null {
  switch (event.type) {
    case 'turn_start':
      return { t: 'start' };
    case 'text_delta':
      return { t: 'delta', text: event.text };
    case 'tool_start':
      return { t: 'tool', phase: 'start', id: event.id, name: event.name };
    case 'tool_end':
      return { t: 'tool', phase: 'end', id: event.id, name: event.name, ok: event.ok };
    case 'status':
      return event.kind === 'retry' || event.kind === 'fallback' ? { t: 'retry' } : null;
    case 'turn_end': {
      const { usage, model, error } = event.result;
      return { t: 'result', usage: { ...usage }, model, error: error?.kind ?? null };
    }
    default:
      return null;
  }
}

export type TurnRelay = (event: AgentEvent) => void;

/**
 * For the turn runner: the live relay of a message that came through the API, by platform (`relays` in
 * turn/stages/deps.ts), so a turn from a chat platform never asks. Appends are queued in order; a failed one is logged
 * by the caller's handler and the turn goes on (the reply itself goes through the egress, whose failure the delivery
 * code handles).
 */
export function apiRelays(publisher: ReplyPublisher, onError: (err: unknown) => void): ReadonlyMap<string, (payload: TurnPayload) => TurnRelay> {
  const relayFor = (payload: TurnPayload): TurnRelay => {
    const requestId = requestIdOf(payload.conversationId);
    return (event) => {
      const e = replyEventOf(event);
      if (e) publisher.publish(requestId, e).catch(onError);
    };
  };
  return new Map([[API_PLATFORM, relayFor]]);
}

/** For the worker: tells each API request among a finished turn's entries that nothing more is coming. */
export function apiTurnEnd(publisher: ReplyPublisher): (entries: MailboxEntry[]) => Promise<void> {
  return async (entries) => {
    const api = entries.filter((e) => e.payload.platform === API_PLATFORM);
    await Promise.all(api.map((e) => publisher.publish(requestIdOf(e.payload.conversationId), { t: 'end' })));
  };
}
