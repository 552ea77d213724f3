/**
 * Herald's own update dispatcher: an update from getUpdates or the webhook is read once as untrusted input, then
 * goes to the handler of its type. It replaces telegraf's `Telegraf` (its middleware chain, a `Context` per update and
 * a second API client), which did nothing here but this routing.
 *
 * The handlers are keyed by the update types Herald asks Telegram for (TELEGRAM_ALLOWED_UPDATES), so asking for
 * another type without handling it does not compile.
 */
import type { InboundMessage } from '../types.js';
import type { TELEGRAM_ALLOWED_UPDATES } from './config.js';
import { normalizeCallbackQuery } from './normalize.js';
import { hasUpdateId, isCallbackQuery, isMessageUpdate, type TgMessage } from './wire.js';

type UpdateType = (typeof TELEGRAM_ALLOWED_UPDATES)[number];

/** What each update type carries to its handler. */
interface Payloads {
  message: TgMessage;
  /** A button press, already normalised (an unreadable one never gets this far). */
  callback_query: InboundMessage;
}

/** One handler per update type; a rejection means the update was not taken (Telegram will send it again). */
export type UpdateHandlers = { [T in UpdateType]: (payload: Payloads[T]) => Promise<void> };

/** An update Herald can route: its id, and what its handler is given (none for a type Herald does not ask for). */
export type ReadUpdate = { id: number } & ({ [T in UpdateType]: { type: T; payload: Payloads[T] } }[UpdateType] | { type: 'other' });

/**
 * Why an update is not routed: `invalid` (no update id, or a message Herald cannot read — refused whole: half-read
 * it could be taken for another message), `dropped` (a press Herald cannot read — failing it would only make
 * Telegram deliver it again). `malformed`: the press breaks the Bot API's types (an id that cannot be one), as no
 * real Telegram sends, rather than being one Herald has no use for.
 */
export interface UnreadUpdate {
  refused: 'invalid' | 'dropped';
  id?: number;
  malformed?: true;
}

/** Reads an update as sent. A message wins over a press when an update carries both, as it did with telegraf. */
export function readUpdate(update: unknown): ReadUpdate | UnreadUpdate {
  if (!hasUpdateId(update)) return { refused: 'invalid' };
  const id = update.update_id;
  if ('message' in update && !isMessageUpdate(update)) return { refused: 'invalid', id };
  let press: InboundMessage | null = null;
  if ('callback_query' in update) {
    const query = update.callback_query;
    if (!isCallbackQuery(query)) return { refused: 'dropped', id, malformed: true };
    press = normalizeCallbackQuery(query);
    if (press === null) return { refused: 'dropped', id };
  }
  if (isMessageUpdate(update)) return { id, type: 'message', payload: update.message };
  if (press !== null) return { id, type: 'callback_query', payload: press };
  return { id, type: 'other' };
}

export function isRead(u: ReadUpdate | UnreadUpdate): u is ReadUpdate {
  return !('refused' in u);
}

/** Runs the update's handler; an update of another type is taken as it is (nothing to do). */
export function routeUpdate(update: ReadUpdate, handlers: UpdateHandlers): Promise<void> {
  switch (update.type) {
    case 'message':
      return handlers.message(update.payload);
    case 'callback_query':
      return handlers.callback_query(update.payload);
    default:
      return Promise.resolve();
  }
}
