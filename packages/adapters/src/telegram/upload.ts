/**
 * Files through the Bot API's upload methods (multipart: the client sends them through telegraf's): pictures with
 * sendPhoto, voice replies with sendVoice (OGG/Opus only: that is what Telegram plays as a voice note), MP3/M4A with
 * sendAudio, everything else with sendDocument. As with text, each refusal Telegram explains gets one step down: a
 * picture sendPhoto cannot take goes as a document, a deleted topic falls back to the chat, a deleted reply target
 * is dropped. A 429 is waited out in `TelegramApi`; a 413 (over the upload limit) becomes FileTooLargeError.
 */
import type { Logger } from 'pino';
import type { OutboundFile } from '../types.js';
import { isPhotoRefused, isReplyNotFound, isThreadNotFound, toPlatformError } from './api-errors.js';
import type { TelegramApi, UploadMethod } from './api.js';
import { TELEGRAM_MAX_CAPTION_LENGTH, TELEGRAM_MAX_PHOTO_BYTES } from './config.js';

/** The multipart field each method takes the file in. */
const FILE_FIELD: Record<UploadMethod, string> = { sendPhoto: 'photo', sendDocument: 'document', sendVoice: 'voice', sendAudio: 'audio' };

/** Pictures sendPhoto turns into photos; GIFs go as documents, so Telegram keeps them animated. */
const PHOTO_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);
const AUDIO_PLAYER_TYPES = new Set(['audio/mpeg', 'audio/mp3', 'audio/mp4', 'audio/x-m4a', 'audio/m4a']);

export interface UploadTarget {
  chatId: string;
  /** Forum topic; dropped (for this and later sends) when Telegram says it is gone. */
  threadId?: number;
}

/** The method Telegram shows this file best with. */
function uploadMethodFor(file: OutboundFile): UploadMethod {
  const type = file.mimeType.toLowerCase();
  if (file.kind === 'image' && PHOTO_TYPES.has(type) && file.data.length <= TELEGRAM_MAX_PHOTO_BYTES) return 'sendPhoto';
  if (file.kind === 'voice' && isOgg(file.data)) return 'sendVoice';
  if ((file.kind === 'voice' || file.kind === 'audio') && AUDIO_PLAYER_TYPES.has(type)) return 'sendAudio';
  return 'sendDocument';
}

function isOgg(data: Buffer): boolean {
  return data.subarray(0, 4).toString('latin1') === 'OggS';
}

/** Sends the file and returns the message id; `target` forgets a topic Telegram no longer has. */
export async function uploadFile(api: TelegramApi, logger: Logger, target: UploadTarget, file: OutboundFile, replyTo: number | undefined): Promise<number> {
  let method = uploadMethodFor(file);
  let reply = replyTo;
  const caption = file.caption?.trim() ? file.caption.trim().slice(0, TELEGRAM_MAX_CAPTION_LENGTH) : undefined;
  for (;;) {
    const payload: Record<string, unknown> = {
      chat_id: target.chatId,
      [FILE_FIELD[method]]: { source: file.data, filename: file.name },
      ...(caption !== undefined && { caption }),
      ...(target.threadId !== undefined && { message_thread_id: target.threadId }),
      // A multipart request carries objects as JSON text; telegraf would drop this one otherwise.
      ...(reply !== undefined && { reply_parameters: JSON.stringify({ message_id: reply }) }),
      ...((method === 'sendVoice' || method === 'sendAudio') && file.durationSec !== undefined && { duration: Math.round(file.durationSec) }),
    };
    try {
      const sent = await api.upload(method, payload);
      return sent.message_id;
    } catch (err) {
      if (method === 'sendPhoto' && isPhotoRefused(err)) {
        logger.info({ file: file.name, size: file.data.length }, 'telegram would not make a photo of this picture; sending it as a document');
        method = 'sendDocument';
      } else if (target.threadId !== undefined && isThreadNotFound(err)) {
        logger.warn({ chatId: target.chatId, threadId: target.threadId }, 'telegram topic is gone; sending the file to the chat');
        delete target.threadId;
      } else if (reply !== undefined && isReplyNotFound(err)) {
        reply = undefined;
      } else {
        throw toPlatformError(err, method);
      }
    }
  }
}
