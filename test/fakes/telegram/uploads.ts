/**
 * The Bot API's upload methods: sendPhoto, sendDocument, sendVoice and sendAudio with the file as a multipart
 * part (or an earlier file_id), with Telegram's checks and error descriptions: a photo must be a picture Telegram
 * can read (IMAGE_PROCESS_FAILED), within 10 MB (PHOTO_SAVE_FILE_INVALID) and of sane dimensions
 * (PHOTO_INVALID_DIMENSIONS: width + height at most 10000, ratio at most 20); captions at most 1024 characters.
 * A voice note must be OGG/Opus, MP3 or M4A to be one; other audio is kept as a document, as the Bot API says
 * such files "may be sent as Audio or Document". The whole request's 50 MB limit is checked in server.ts,
 * before anything else, as Telegram's front end does. Uploaded files can be fetched again (getFile + download).
 */
import { isMp3 } from '../media/mp3.js';
import { readOgg } from '../media/ogg.js';
import { pictureInfo } from '../media/images.js';
import type { UploadedPart } from '../media/multipart.js';
import { ApiError, badRequest, telegramErrors } from './errors.js';
import { toInt } from './http-body.js';
import { postBotMessage, replyTarget, requireChat, topicFor, type Handler } from './methods.js';
import type { FakeFile, Json, JsonObject } from './state.js';
import type { FakeContext, SentFile } from './types.js';

export const TELEGRAM_MAX_CAPTION_LENGTH = 1024;
const MAX_DIMENSIONS_SUM = 10_000;
const MAX_ASPECT_RATIO = 20;

type Shown = SentFile['shownAs'];

interface Incoming {
  name: string;
  contentType: string;
  data: Buffer;
  /** Set when the request named a file Telegram already has. */
  known?: FakeFile;
}

/** The file in `field`: the multipart part, or a file_id string of an earlier file. */
function incomingFile(ctx: FakeContext, p: JsonObject, files: UploadedPart[], field: string): Incoming {
  const part = files.find((f) => f.field === field);
  if (part) return { name: part.filename, contentType: part.contentType, data: part.data };
  const ref = p[field];
  if (typeof ref === 'string' && ref !== '') {
    const known = ctx.world.files.get(ref);
    if (!known) throw badRequest('wrong file identifier/HTTP URL specified');
    return { name: known.filePath.split('/').pop() ?? 'file', contentType: 'application/octet-stream', data: known.content, known };
  }
  throw badRequest(`there is no ${field} in the request`);
}

function captionOf(p: JsonObject): string | undefined {
  if (p.caption === undefined || p.caption === '') return undefined;
  const caption = String(p.caption);
  if (caption.length > TELEGRAM_MAX_CAPTION_LENGTH) throw badRequest('message caption is too long');
  return caption;
}

function checkPhoto(ctx: FakeContext, file: Incoming): { width: number; height: number } {
  if (file.data.length > ctx.limits.photoBytes) throw badRequest('PHOTO_SAVE_FILE_INVALID');
  const info = pictureInfo(file.data);
  if (!info) throw badRequest('IMAGE_PROCESS_FAILED');
  const { width, height } = info;
  if (width > 0 && height > 0) {
    if (width + height > MAX_DIMENSIONS_SUM || Math.max(width, height) / Math.min(width, height) > MAX_ASPECT_RATIO) {
      throw badRequest('PHOTO_INVALID_DIMENSIONS');
    }
  }
  return { width, height };
}

/** What a voice or audio upload is shown as, with its duration when Telegram can tell it. */
function audioShownAs(file: Incoming, wanted: 'voice' | 'audio'): { shown: Shown; duration?: number } {
  const ogg = readOgg(file.data);
  const m4a = file.data.subarray(4, 8).toString('latin1') === 'ftyp';
  if (wanted === 'voice' && ogg?.opus && ogg.crcOk) return { shown: 'voice', duration: Math.round(ogg.durationSec) };
  if (isMp3(file.data) || m4a) return { shown: wanted };
  return { shown: 'document' };
}

function fileJson(stored: FakeFile, file: Incoming, shown: Shown, extra: JsonObject): JsonObject {
  const base: JsonObject = { file_id: stored.fileId, file_unique_id: stored.fileUniqueId, file_size: file.data.length, ...extra };
  if (shown === 'photo') return base;
  return {
    ...base,
    ...(shown !== 'voice' && { file_name: file.name }),
    mime_type: shown === 'voice' ? 'audio/ogg' : file.contentType || 'application/octet-stream',
  };
}

function upload(field: 'photo' | 'document' | 'voice' | 'audio'): Handler {
  return (ctx, p, _onClose, files) => {
    const chat = requireChat(ctx, p);
    const thread = topicFor(chat, p, false);
    const file = incomingFile(ctx, p, files, field);
    const caption = captionOf(p);
    const reply = replyTarget(chat, p);

    let shown: Shown = field;
    let media: Json;
    let duration: number | undefined;
    if (field === 'photo') {
      const { width, height } = checkPhoto(ctx, file);
      const stored = file.known ?? ctx.world.addFile(file.data, 'photo', 'jpg');
      media = [fileJson(stored, file, 'photo', { width, height })];
    } else {
      if (field === 'voice' || field === 'audio') ({ shown, duration } = audioShownAs(file, field));
      const ext = file.name.includes('.') ? (file.name.split('.').pop() ?? 'dat') : 'dat';
      const stored = file.known ?? ctx.world.addFile(file.data, shown, ext);
      const stated = toInt(p.duration);
      media = fileJson(stored, file, shown, shown === 'voice' || shown === 'audio' ? { duration: duration ?? stated ?? 0 } : {});
      duration ??= stated;
    }
    const message = postBotMessage(ctx, chat, thread, reply, { [shown]: media, ...(caption !== undefined && { caption }) });
    ctx.sent.push({
      method: `send${field[0].toUpperCase()}${field.slice(1)}`,
      chat_id: String(chat.id),
      ...(thread !== undefined && { message_thread_id: thread }),
      ...(reply && { reply_to_message_id: reply.message_id as number }),
      message_id: message.message_id as number,
      ...(caption !== undefined && { caption }),
      file: { field, shownAs: shown, name: file.name, contentType: file.contentType, data: file.data, ...(duration !== undefined && { duration }) },
      params: p,
    });
    return message;
  };
}

export const UPLOAD_METHODS: Record<string, Handler> = {
  sendPhoto: upload('photo'),
  sendDocument: upload('document'),
  sendVoice: upload('voice'),
  sendAudio: upload('audio'),
};

export function requestTooLarge(): ApiError {
  return new ApiError(telegramErrors.requestTooLarge());
}
