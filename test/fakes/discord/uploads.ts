/**
 * Create Message with files, as Discord takes it: multipart/form-data with the JSON body in `payload_json` and
 * each file in `files[n]`, the body's `attachments` naming them by `id` = n. The files of one request may add up
 * to the channel's upload limit (10 MiB for servers without boosts, and for DMs); above it Discord answers
 * 413 `{ message: 'Request entity too large', code: 40005 }` and posts nothing. At most 10 files a message.
 */
import type { UploadedPart } from '../media/multipart.js';
import { parseMultipart } from '../media/multipart.js';
import type { JsonObject } from './model.js';
import { DiscordHttpError, fieldError } from './rules.js';
import type { World } from './world.js';

/** Discord's default upload limit per message (servers without boosts, DMs). */
export const DISCORD_DEFAULT_UPLOAD_LIMIT_BYTES = 10 * 1024 * 1024;
const DISCORD_MAX_FILES_PER_MESSAGE = 10;

export interface MessageUpload {
  /** The JSON body (`payload_json`). */
  body: JsonObject;
  files: UploadedPart[];
}

/** Reads a multipart Create Message; throws DiscordHttpError as Discord would answer. */
export async function readMessageUpload(raw: Buffer, contentType: string, limitBytes: number): Promise<MessageUpload> {
  let parsed: Awaited<ReturnType<typeof parseMultipart>>;
  try {
    parsed = await parseMultipart(raw, contentType);
  } catch {
    throw new DiscordHttpError(400, 50109, 'The request body contains invalid JSON.');
  }
  const files = parsed.files.filter((f) => /^files\[\d+\]$/.test(f.field));
  if (files.reduce((n, f) => n + f.data.length, 0) > limitBytes) throw new DiscordHttpError(413, 40005, 'Request entity too large');
  if (files.length > DISCORD_MAX_FILES_PER_MESSAGE) {
    throw fieldError('files', 'BASE_TYPE_MAX_LENGTH', `Must be ${DISCORD_MAX_FILES_PER_MESSAGE} or fewer in length.`);
  }
  let body: JsonObject = {};
  const json = parsed.fields.payload_json;
  if (json !== undefined) {
    try {
      const value: unknown = JSON.parse(json);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) body = value as JsonObject;
    } catch {
      throw new DiscordHttpError(400, 50109, 'The request body contains invalid JSON.');
    }
  }
  return { body, files };
}

/** The message's `attachments` as Discord stores them: CDN URLs, sizes, types, the filename the body gave. */
export function attachmentsOf(world: World, channelId: string, upload: MessageUpload): JsonObject[] {
  const declared = Array.isArray(upload.body.attachments) ? (upload.body.attachments as JsonObject[]) : [];
  return upload.files.map((file) => {
    const index = Number(/\d+/.exec(file.field)?.[0]);
    const meta = declared.find((a) => String(a.id) === String(index));
    if (declared.length > 0 && !meta) throw fieldError('attachments', 'ATTACHMENT_NOT_FOUND', `Attachment ${index} is not in the payload`);
    const id = world.ids.next();
    const filename = typeof meta?.filename === 'string' ? meta.filename : file.filename;
    return {
      id,
      filename,
      size: file.data.length,
      url: `https://cdn.discordapp.com/attachments/${channelId}/${id}/${filename}`,
      proxy_url: `https://media.discordapp.net/attachments/${channelId}/${id}/${filename}`,
      ...(file.contentType && { content_type: file.contentType }),
    };
  });
}
