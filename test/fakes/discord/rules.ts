/**
 * Discord's limits, error shapes and event audiences as the stand-in enforces them (shared by the world, its REST
 * routes, uploads, interactions and gateway).
 */
import type { JsonObject } from './model.js';

export const MAX_CONTENT_LENGTH = 2000;
/** Create Message: `nonce` is a string or integer of at most 25 characters. */
const MAX_NONCE_LENGTH = 25;
/**
 * How long `enforce_nonce` finds an earlier message with the same nonce. Discord says "the past few minutes" and
 * gives no number; tests that need the window to pass use `World.advanceClock` or a shorter `nonceWindowMs`.
 */
export const DEFAULT_NONCE_WINDOW_MS = 3 * 60_000;
export const MAX_THREAD_NAME_LENGTH = 100;

/** Gateway intents that decide who receives an event (Discord docs: events/gateway#gateway-intents). */
export const Intents = { Guilds: 1 << 0, GuildMessages: 1 << 9, DirectMessages: 1 << 12, MessageContent: 1 << 15 } as const;

/** What the gateway needs to know to deliver an event the way Discord would. */
export interface Audience {
  intent: number;
  /** For messages: who may see the content without the Message Content intent (DMs and mentions of the bot). */
  contentVisibleWithoutIntent?: boolean;
}

export type Emit = (event: string, data: JsonObject, audience: Audience) => void;

/** A Discord JSON error: `{ message, code, errors? }` with its HTTP status. */
export class DiscordHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: JsonObject,
  ) {
    super(message);
  }

  body(): JsonObject {
    const body: JsonObject = { message: this.message, code: this.code };
    if (this.errors) body.errors = this.errors;
    return body;
  }
}

export function fieldError(field: string, code: string, message: string): DiscordHttpError {
  return new DiscordHttpError(400, 50035, 'Invalid Form Body', { [field]: { _errors: [{ code, message }] } });
}

/** A Create Message `nonce` as Discord validates it: a string or an integer, at most 25 characters; else 400. */
export function nonceOf(body: JsonObject): string | undefined {
  const nonce = body.nonce;
  if (nonce === undefined || nonce === null) return undefined;
  if (typeof nonce !== 'string' && !(typeof nonce === 'number' && Number.isInteger(nonce))) {
    throw fieldError('nonce', 'NONCE_TYPE_INVALID_TYPE', 'This field must be a string or integer.');
  }
  const text = String(nonce);
  if (text.length > MAX_NONCE_LENGTH) {
    throw fieldError('nonce', 'NONCE_TYPE_TOO_LONG', `Must be ${MAX_NONCE_LENGTH} or fewer characters long.`);
  }
  return text;
}
