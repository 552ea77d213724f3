export { startTelegramFake, TelegramFake, type TelegramFakeOptions } from './server.js';
export { telegramErrors, type TelegramErrorBody } from './errors.js';
export { parseTelegramHtml, type Entity, type HtmlParse } from './html.js';
export type { InjectMessageOptions } from './inject.js';
export type { ApiCallRecord, Failure, SentRecord, WebhookConfig, WebhookDelivery } from './types.js';
export type { Json, JsonObject } from './state.js';
