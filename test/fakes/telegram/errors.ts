/**
 * Bot API failures as Telegram sends them: HTTP status = error_code, body `{ok:false, error_code, description,
 * parameters?}`. The builders reproduce Telegram's exact descriptions, which clients match on.
 */

export interface TelegramErrorBody {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/** Thrown by a method handler; the server turns it into the error response. */
export class ApiError extends Error {
  constructor(readonly body: TelegramErrorBody) {
    super(`${body.error_code}: ${body.description}`);
  }
}

export const badRequest = (what: string): ApiError => new ApiError({ error_code: 400, description: `Bad Request: ${what}` });

/** Ready-made errors for `failNext` and for the handlers. */
export const telegramErrors = {
  unauthorized: (): TelegramErrorBody => ({ error_code: 401, description: 'Unauthorized' }),
  notFound: (): TelegramErrorBody => ({ error_code: 404, description: 'Not Found' }),
  tooManyRequests: (retryAfterSec: number): TelegramErrorBody => ({
    error_code: 429,
    description: `Too Many Requests: retry after ${retryAfterSec}`,
    parameters: { retry_after: retryAfterSec },
  }),
  pollConflict: (): TelegramErrorBody => ({
    error_code: 409,
    description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
  }),
  webhookActive: (): TelegramErrorBody => ({
    error_code: 409,
    description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
  }),
  chatNotFound: (): TelegramErrorBody => ({ error_code: 400, description: 'Bad Request: chat not found' }),
  threadNotFound: (): TelegramErrorBody => ({ error_code: 400, description: 'Bad Request: message thread not found' }),
  replyNotFound: (): TelegramErrorBody => ({ error_code: 400, description: 'Bad Request: message to be replied not found' }),
  cantParseEntities: (detail = 'Unsupported start tag "foo" at byte offset 0'): TelegramErrorBody => ({
    error_code: 400,
    description: `Bad Request: can't parse entities: ${detail}`,
  }),
  notModified: (): TelegramErrorBody => ({
    error_code: 400,
    description:
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
  }),
  blocked: (): TelegramErrorBody => ({ error_code: 403, description: 'Forbidden: bot was blocked by the user' }),
  reactionInvalid: (): TelegramErrorBody => ({ error_code: 400, description: 'Bad Request: REACTION_INVALID' }),
  internal: (): TelegramErrorBody => ({ error_code: 500, description: 'Internal Server Error' }),
  /** What Telegram's front end answers an upload over its size limit with (JSON, HTTP 413). */
  requestTooLarge: (): TelegramErrorBody => ({ error_code: 413, description: 'Request Entity Too Large' }),
};
