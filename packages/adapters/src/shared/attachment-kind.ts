import type { Attachment } from '../types.js';

/** The attachment kind a MIME type says (image/audio/video), else a plain file. */
export function kindOfMime(mime: string | undefined): Attachment['kind'] {
  const family = mime?.split('/')[0];
  return family === 'image' || family === 'audio' || family === 'video' ? family : 'file';
}
