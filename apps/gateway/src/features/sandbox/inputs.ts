/**
 * The files the user sent in a turn, as the sandbox's `inputs/`: fetched through the platform (the same downloads
 * media/prepare.ts uses) only when the agent first runs code, within the per-file and per-turn byte limits. A file
 * that cannot be fetched is left out (the model already has a note about it from the media step).
 */
import type { Attachment, PlatformFiles } from '@herald/adapters';
import type { InputFile } from './types.js';

const EXTENSIONS: Record<string, string> = {
  'image/jpeg': '.jpg',
  'image/png': '.png',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'application/pdf': '.pdf',
  'audio/ogg': '.ogg',
  'audio/mpeg': '.mp3',
  'video/mp4': '.mp4',
  'text/csv': '.csv',
  'text/plain': '.txt',
};

/** The name a file gets in inputs/: its own, else what it is and its place ("image-1.jpg"). */
function inputFileName(att: Attachment, index: number): string {
  if (att.name && att.name.trim() !== '') return att.name;
  return `${att.kind}-${index + 1}${EXTENSIONS[att.mimeType?.split(';')[0].trim().toLowerCase() ?? ''] ?? ''}`;
}

export interface InputLimits {
  maxFileBytes: number;
  maxTotalBytes: number;
}

export async function turnInputFiles(attachments: readonly Attachment[], files: PlatformFiles, limits: InputLimits, signal: AbortSignal): Promise<InputFile[]> {
  const out: InputFile[] = [];
  let left = limits.maxTotalBytes;
  for (const [i, att] of attachments.entries()) {
    if (signal.aborted || left <= 0) break;
    try {
      const { bytes } = await files.download(att, { maxBytes: Math.min(limits.maxFileBytes, left), signal });
      out.push({ name: inputFileName(att, i), data: bytes });
      left -= bytes.length;
    } catch {
      // left out: too large, gone, or the platform refused
    }
  }
  return out;
}
