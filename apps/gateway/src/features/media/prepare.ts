/**
 * The files of one turn, made into what the model reads: each attachment is fetched through its platform's API
 * at turn time, checked against the limits, and becomes an image to show (or a description of it), a transcript,
 * a document's text, or a one-line note saying why not. The history keeps a reference per file (never bytes);
 * the text derived from it is part of the user message.
 *
 * Nothing here throws for a bad file: every failure becomes a notice for the user (naming the file and the
 * reason), a note for the model, and a log line without the file's contents or any URL.
 */
import { providerLabel, type AttachmentRef, type ImageInput } from '@herald/agent-core';
import type { Attachment } from '@herald/adapters';
import type { Logger } from '../../support/logger.js';
import type { TurnPayload } from '../../queue/mailbox.js';
import type { ModelCall } from '../budgets/meter.js';
import { handlingOf, sniffImageType, type MediaHandling } from './classify.js';
import { extractDocumentText, type ExtractedText } from './documents.js';
import { errorLabel, reasonOf, type Reason } from './reasons.js';
import type { MediaServices } from './services.js';
import { STT_MAX_BYTES } from './transcribe.js';

export interface TurnMedia {
  /** Per mailbox entry, in order: what the model reads after that entry's text. */
  blocks: string[][];
  /** Every file of the turn, for the stored user message. */
  attachments: AttachmentRef[];
  /** Images shown to the model on this turn's calls. */
  images: ImageInput[];
  /** One line per file that could not be used (or was cut), for the user. */
  notices: string[];
  /** True when at least one file gave the model something (an image, a transcript, text). */
  usable: boolean;
  /**
   * The model calls made for them (one per description or transcription answered), each with the model that
   * answered and its tokens: counted and priced with the turn's own (features/budgets/meter.ts).
   */
  calls: ModelCall[];
}

export interface MediaContext {
  /** Whether the model answering this turn takes images. */
  vision: boolean;
  /** `provider:model` of that model, for the reply when it cannot see. */
  model: string;
  signal: AbortSignal;
  log: Logger;
}

type Outcome = { ok: true; block: string; image?: ImageInput; cut?: string } | { ok: false; why: string; logReason: string };

/** A turn's media before any file is read: an empty block list per message, nothing else (all a turn without files comes to). */
export function turnMediaWithoutFiles(payloads: readonly TurnPayload[]): TurnMedia {
  return { blocks: payloads.map(() => []), attachments: [], images: [], notices: [], usable: false, calls: [] };
}

export async function prepareTurnMedia(payloads: readonly TurnPayload[], services: MediaServices, ctx: MediaContext): Promise<TurnMedia> {
  const out = turnMediaWithoutFiles(payloads);
  const budget = { bytesLeft: services.limits.maxMessageBytes, imagesLeft: services.limits.maxImages };
  // Unnamed files are numbered across the turn ("photo 2"), so the parts of an album stay apart.
  const all = payloads.flatMap((p) => p.attachments ?? []);
  for (const [i, p] of payloads.entries()) {
    const blocks = out.blocks[i];
    for (const sent of p.attachments ?? []) {
      if (ctx.signal.aborted) break;
      // A file the platform named only by id (a Slack Connect share) is looked up first: its type decides the rest.
      const resolved = await resolveFile(sent, p.platform, services, ctx.signal);
      const att = 'failed' in resolved ? sent : resolved;
      const name = displayName(sent, all, att.name);
      out.attachments.push(refOf(p.platform, att));
      // A /retry sends the stored text again (transcripts and document text included): only images are fetched anew.
      if (p.mediaInText && !('failed' in resolved) && handlingOf(att).as !== 'image') continue;
      const outcome: Outcome =
        'failed' in resolved
          ? { ok: false, why: resolved.failed.why, logReason: resolved.failed.log }
          : await prepareOne(att, name, p, services, ctx, budget, (call) => out.calls.push(call));
      if (outcome.ok) {
        out.usable = true;
        if (!p.mediaInText) blocks.push(outcome.block);
        if (outcome.image) out.images.push(outcome.image);
        if (outcome.cut) out.notices.push(`✂️ ${name}: ${outcome.cut}.`);
      } else {
        if (!p.mediaInText) blocks.push(`[File "${name}" could not be used: ${outcome.why}]`);
        out.notices.push(`⚠️ ${name}: ${outcome.why}.`);
        ctx.log.warn(
          { attachment: { platform: p.platform, kind: att.kind, mimeType: att.mimeType, size: att.size }, reason: outcome.logReason },
          'attachment not used',
        );
      }
    }
  }
  return out;
}

async function prepareOne(
  att: Attachment,
  name: string,
  p: TurnPayload,
  services: MediaServices,
  ctx: MediaContext,
  budget: { bytesLeft: number; imagesLeft: number },
  spent: (call: ModelCall) => void,
): Promise<Outcome> {
  const handling = handlingOf(att);
  const { limits } = services;
  if (handling.as === 'unsupported') return { ok: false, why: handling.why, logReason: 'unsupported type' };
  if (handling.as === 'image') {
    if (!ctx.vision && !services.describe) return noVision(ctx);
    if (budget.imagesLeft <= 0) return { ok: false, why: `only ${limits.maxImages} images are taken per message`, logReason: 'too many images' };
  }
  if (handling.as === 'audio' && !services.transcribe) return NO_STT;
  const cap = fileCap(handling, limits);
  const maxBytes = Math.min(cap, budget.bytesLeft);
  let bytes: Buffer;
  try {
    ({ bytes } = await services.files(p.platform, p.account).download(att, { maxBytes, signal: ctx.signal }));
  } catch (err) {
    const reason = reasonOf(err, p.platform, { cap, messageLimit: maxBytes < cap ? limits.maxMessageBytes : undefined });
    return { ok: false, why: reason.why, logReason: reason.log };
  }
  budget.bytesLeft -= bytes.length;
  try {
    switch (handling.as) {
      case 'image':
        budget.imagesLeft -= 1;
        return await imageOutcome(bytes, name, p.text, services, ctx, spent);
      case 'audio': {
        if (!services.transcribe) return NO_STT; // checked before the download too
        const heard = await services
          .transcribe(bytes, handling.uploadName, ctx.signal)
          .catch((err: unknown) => failed('it could not be transcribed', `stt: ${errorLabel(err)}`));
        if (!('text' in heard)) return heard;
        spent(heard.call);
        const transcript = heard.text;
        if (transcript === '') return { ok: false, why: 'no speech could be made out in it', logReason: 'empty transcript' };
        const clipped = clipText(transcript, limits.maxChars);
        const label = att.voice ? 'Voice message' : `Audio "${name}"`;
        return { ok: true, block: `[${label}, transcribed: ${clipped.text}]`, cut: clipped.cut };
      }
      case 'pdf':
      case 'docx':
      case 'text': {
        const doc = await extractDocumentText(handling.as, bytes, limits);
        if (doc.text === '') return { ok: false, why: 'no text could be found in it', logReason: 'empty document' };
        return { ok: true, block: documentBlock(name, doc), cut: doc.cut };
      }
    }
  } catch (err) {
    const reason = reasonOf(err, p.platform, { cap });
    return { ok: false, why: reason.why, logReason: reason.log };
  }
}

async function imageOutcome(
  bytes: Buffer,
  name: string,
  caption: string,
  services: MediaServices,
  ctx: MediaContext,
  spent: (call: ModelCall) => void,
): Promise<Outcome> {
  // What the bytes are, not what the platform called them: providers refuse a mismatch.
  const mimeType = sniffImageType(bytes);
  if (!mimeType) return { ok: false, why: 'the image looks damaged or is not a JPEG, PNG, GIF or WebP', logReason: 'not an image' };
  const image: ImageInput = { mimeType, data: bytes.toString('base64'), name };
  if (ctx.vision) return { ok: true, block: `[Image: ${name}]`, image };
  if (!services.describe) return noVision(ctx); // checked before the download too
  const description = await services
    .describe(image, caption, ctx.signal)
    .catch((err: unknown) => failed('the vision model could not describe it', `describe: ${errorLabel(err)}`));
  if (!('text' in description)) return description;
  spent(description.call);
  return { ok: true, block: `[Image: ${name}. You cannot see it; ${providerLabel(description.call.by)} described it: ${description.text}]` };
}

const NO_STT: Outcome = { ok: false, why: 'voice messages and audio cannot be transcribed here (no speech-to-text model is set up)', logReason: 'no stt' };

function noVision(ctx: MediaContext): Outcome {
  return { ok: false, why: `${ctx.model} cannot see images, so the picture was not passed on`, logReason: 'no vision' };
}

function failed(why: string, logReason: string): Outcome {
  return { ok: false, why, logReason };
}

/** The largest download worth making for this kind of file. */
function fileCap(handling: MediaHandling, limits: MediaServices['limits']): number {
  if (handling.as === 'image') return Math.min(limits.maxFileBytes, limits.maxImageBytes);
  if (handling.as === 'audio') return Math.min(limits.maxFileBytes, STT_MAX_BYTES);
  return limits.maxFileBytes;
}

function documentBlock(name: string, doc: ExtractedText): string {
  const pages = doc.pages === undefined ? '' : `, ${doc.pages} page${doc.pages === 1 ? '' : 's'}`;
  return `[Document "${name}"${pages}]\n${doc.text}\n[End of "${name}"${doc.cut ? `: ${doc.cut}` : ''}]`;
}

function clipText(text: string, maxChars: number): { text: string; cut?: string } {
  if (text.length <= maxChars) return { text };
  return {
    text: `${text.slice(0, maxChars)}…`,
    cut: `only the first ${maxChars.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters were kept`,
  };
}

/** A file the platform sent only the id of, made whole; or why that failed. */
async function resolveFile(att: Attachment, platform: string, services: MediaServices, signal: AbortSignal): Promise<Attachment | { failed: Reason }> {
  if (!att.unresolved) return att;
  try {
    const files = services.files(platform);
    if (!files.resolve) throw new Error(`${platform} cannot look files up`);
    return await files.resolve(att, signal);
  } catch (err) {
    return { failed: reasonOf(err, platform, { cap: services.limits.maxFileBytes }) };
  }
}

/** The file's own name, else what it is ("photo", "voice message"), numbered when a message has several. */
function displayName(att: Attachment, all: readonly Attachment[], resolvedName?: string): string {
  if (resolvedName) return resolvedName;
  if (att.name) return att.name;
  const generic = (a: Attachment): string =>
    a.voice ? 'voice message' : a.kind === 'image' ? 'photo' : a.kind === 'audio' ? 'audio' : a.kind === 'video' ? 'video' : 'file';
  const label = generic(att);
  const same = all.filter((a) => !a.name && generic(a) === label);
  return same.length > 1 ? `${label} ${same.indexOf(att) + 1}` : label;
}

/** The stored reference: where the file lives and what it is; never a URL with a token (Telegram's is `tg-file:`). */
function refOf(platform: string, att: Attachment): AttachmentRef {
  const ref: AttachmentRef = { platform, fileId: att.fileId ?? att.url, url: att.url, kind: att.kind };
  if (att.mimeType !== undefined) ref.mimeType = att.mimeType;
  if (att.size !== undefined) ref.size = att.size;
  if (att.name !== undefined) ref.name = att.name;
  return ref;
}

/** Back from a stored reference to an attachment a worker can fetch (for /retry). */
export function attachmentOf(ref: AttachmentRef): Attachment {
  const att: Attachment = { kind: ref.kind, url: ref.url, fileId: ref.fileId };
  if (ref.mimeType !== undefined) att.mimeType = ref.mimeType;
  if (ref.size !== undefined) att.size = ref.size;
  if (ref.name !== undefined) att.name = ref.name;
  return att;
}
