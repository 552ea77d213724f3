/**
 * Telegram adapter: long polling or webhook ingress with Herald's own update dispatcher, Bot API egress, all through
 * one Bot API client (api.ts; telegraf 4 for its types and multipart uploads), `telegram:<chat>[:<topic>]`
 * conversation ids.
 */
import type { TelegramEgressOptions, TelegramIngressOptions } from './config.js';
import { TelegramEgress } from './egress.js';
import { TelegramIngress } from './ingress.js';
import { TelegramFiles, type TelegramFilesOptions } from './files.js';

export function createTelegramIngress(opts: TelegramIngressOptions): TelegramIngress {
  return new TelegramIngress(opts);
}

export function createTelegramEgress(opts: TelegramEgressOptions): TelegramEgress {
  return new TelegramEgress(opts);
}

export function createTelegramFiles(opts: TelegramFilesOptions): TelegramFiles {
  return new TelegramFiles(opts);
}

export { TelegramIngress } from './ingress.js';
export { TelegramFiles, type TelegramFilesOptions } from './files.js';
export { TelegramEgress } from './egress.js';
export { telegramCodec, type TelegramConversation } from './codec.js';
export { markdownToTelegramHtml } from './format.js';
export { LocalPartsMemory, type OpenSplit, type PartsMemory } from './parts-memory.js';
export {
  TELEGRAM_MAX_MESSAGE_LENGTH,
  TELEGRAM_TYPING_REFRESH_MS,
  TELEGRAM_DEFAULT_WAITS,
  type ReconnectWaits,
  type TelegramCommand,
  type TelegramEgressOptions,
  type TelegramIngressOptions,
  type TelegramWebhookOptions,
} from './config.js';
