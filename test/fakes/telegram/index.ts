export { startTelegramFake, TelegramFake, type TelegramFakeOptions } from './server.js';
export { telegramErrors, type TelegramErrorBody } from './errors.js';
export { parseTelegramHtml, type Entity, type HtmlParse } from './html.js';
export type { InjectMessageOptions } from './inject.js';
export type { ApiCallRecord, Failure, SentFile, SentRecord, UploadLimits, WebhookConfig, WebhookDelivery } from './types.js';
export { TELEGRAM_MAX_CAPTION_LENGTH } from './uploads.js';
export type { Json, JsonObject } from './state.js';
