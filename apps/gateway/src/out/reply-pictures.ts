/**
 * Pictures in the reply's text (`![alt](https://…)`, HERALD_REPLY_IMAGES): no chat app shows a Markdown image,
 * so each one is downloaded (web_fetch's guarded client, the outbound limits) and sent as a picture after the
 * text, its alt text as caption, and the Markdown taken out of the text. One that cannot be fetched, is too large
 * or is no picture stays in the text as it was: the user still has the link. Images inside code blocks are text.
 */
import { outboundFileFromUrl, type WebFetchOptions } from '@herald/agent-core';
import type { Logger } from '../support/logger.js';
import type { OutboundLimits } from './limits.js';
import type { ReplyFiles } from './reply-files.js';

const MARKDOWN_IMAGE = /!\[([^\]\n]*)\]\(\s*<?(https?:\/\/[^\s)>]+)>?(?:\s+"[^"\n]*")?\s*\)/g;
const CODE_FENCE = /```[\s\S]*?(?:```|$)/g;
/** What is left of a text that was nothing but pictures. */
export const PICTURES_ONLY_TEXT = '🖼️';

interface Found {
  markdown: string;
  alt: string;
  url: string;
  index: number;
}

function imagesOutsideCode(text: string): Found[] {
  const fences = [...text.matchAll(CODE_FENCE)].map((m) => [m.index, m.index + m[0].length] as const);
  const inCode = (i: number): boolean => fences.some(([from, to]) => i >= from && i < to);
  return [...text.matchAll(MARKDOWN_IMAGE)].filter((m) => !inCode(m.index)).map((m) => ({ markdown: m[0], alt: m[1].trim(), url: m[2], index: m.index }));
}

export interface ReplyPicturesInput {
  text: string;
  files: ReplyFiles;
  limits: OutboundLimits;
  fetch: WebFetchOptions;
  signal: AbortSignal;
  log: Logger;
}

/** The text without the pictures that were taken into `files` (in the order they appear). */
export async function takePicturesFromReply({ text, files, limits, fetch, signal, log }: ReplyPicturesInput): Promise<string> {
  const found = imagesOutsideCode(text);
  if (found.length === 0) return text;
  const taken: Found[] = [];
  for (const image of found) {
    if (files.room === 0 || signal.aborted) break;
    try {
      const file = await outboundFileFromUrl(image.url, { ...(image.alt && { caption: image.alt }) }, limits.file, fetch, signal);
      if (file.kind !== 'image') {
        log.info({ type: file.mimeType }, 'an image in the reply is no picture; left as a link');
        continue;
      }
      files.add(file);
      taken.push(image);
    } catch (err) {
      log.info({ err: err instanceof Error ? err.message : String(err) }, 'a picture in the reply could not be fetched; left as a link');
    }
  }
  let out = text;
  for (const image of taken.reverse()) out = out.slice(0, image.index) + out.slice(image.index + image.markdown.length);
  if (taken.length === 0) return text;
  const tidy = out
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return tidy === '' ? PICTURES_ONLY_TEXT : tidy;
}
