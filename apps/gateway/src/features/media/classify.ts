/**
 * What Herald does with a file, from its MIME type and name: show an image, transcribe audio, read a document's
 * text, or decline it. Platforms often send `application/octet-stream` for source files, so the extension counts
 * too.
 */
export type MediaHandling =
  | { as: 'image' }
  | { as: 'audio'; uploadName: string }
  | { as: 'pdf' }
  | { as: 'docx' }
  | { as: 'text' }
  | { as: 'unsupported'; why: string };

/** The image types both providers take. */
export const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] as const;

/** Extensions the OpenAI transcription API takes (it judges the format by the upload's file name). */
const AUDIO_EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];
const AUDIO_EXTENSION_OF_MIME: Readonly<Record<string, string>> = {
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mp4': 'm4a',
  'audio/m4a': 'm4a',
  'audio/x-m4a': 'm4a',
  'audio/aac': 'm4a',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/webm': 'webm',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
};

const TEXT_MIME =
  /^(text\/|application\/(json|ld\+json|xml|x-yaml|yaml|toml|x-toml|javascript|x-javascript|typescript|x-sh|x-shellscript|sql|x-python|csv|x-ndjson|graphql))/;
const TEXT_EXTENSIONS = new Set(
  (
    'txt md markdown rst csv tsv json jsonl ndjson xml yaml yml toml ini cfg conf env log html htm css scss sass less ' +
    'js mjs cjs jsx ts tsx py rb go rs java kt kts scala c h cc cpp hpp cs swift m php pl sh bash zsh fish ps1 sql ' +
    'graphql proto lua r dart ex exs erl hs clj vue svelte tex gradle properties dockerfile makefile'
  ).split(' '),
);
const PDF_MIME = 'application/pdf';
const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface FileFacts {
  kind: 'image' | 'audio' | 'video' | 'file';
  mimeType?: string;
  name?: string;
  voice?: boolean;
}

function extensionOf(name: string | undefined): string {
  if (!name) return '';
  const base = name.toLowerCase().split('/').pop() ?? '';
  if (base === 'dockerfile' || base === 'makefile') return base;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1) : '';
}

export function handlingOf(f: FileFacts): MediaHandling {
  const mime = f.mimeType?.split(';')[0]?.trim().toLowerCase();
  const ext = extensionOf(f.name);
  if (f.kind === 'image' || mime?.startsWith('image/')) {
    if (mime === undefined || (IMAGE_TYPES as readonly string[]).includes(mime)) return { as: 'image' };
    return { as: 'unsupported', why: `${mime} images cannot be shown to the model (JPEG, PNG, GIF and WebP can)` };
  }
  if (f.voice || f.kind === 'audio' || mime?.startsWith('audio/')) {
    const extension = AUDIO_EXTENSIONS.includes(ext) ? ext : AUDIO_EXTENSION_OF_MIME[mime ?? ''];
    if (extension === undefined) return { as: 'unsupported', why: `the audio format ${mime ?? ext} cannot be transcribed` };
    const stem = f.name?.replace(/\.[^.]*$/, '') || (f.voice ? 'voice' : 'audio');
    return { as: 'audio', uploadName: `${stem}.${extension}` };
  }
  if (f.kind === 'video' || mime?.startsWith('video/')) return { as: 'unsupported', why: 'videos are not supported' };
  if (mime === PDF_MIME || ext === 'pdf') return { as: 'pdf' };
  if (mime === DOCX_MIME || ext === 'docx') return { as: 'docx' };
  if ((mime !== undefined && TEXT_MIME.test(mime)) || TEXT_EXTENSIONS.has(ext)) return { as: 'text' };
  return { as: 'unsupported', why: `this type of file cannot be read${mime ? ` (${mime})` : ''}` };
}

/** The image type the bytes really are (by magic number), whatever the platform said; undefined if none we show. */
export function sniffImageType(bytes: Buffer): (typeof IMAGE_TYPES)[number] | undefined {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 8 && bytes.readUInt32BE(0) === 0x89504e47 && bytes.readUInt32BE(4) === 0x0d0a1a0a) return 'image/png';
  if (bytes.length >= 6 && /^GIF8[79]a$/.test(bytes.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (bytes.length >= 12 && bytes.subarray(0, 4).toString('latin1') === 'RIFF' && bytes.subarray(8, 12).toString('latin1') === 'WEBP') return 'image/webp';
  return undefined;
}
