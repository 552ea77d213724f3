/**
 * OpenAI's speech-to-text endpoint, `POST /v1/audio/transcriptions`: multipart/form-data with `file` and `model`
 * (and optional `response_format`, `language`, `prompt`), answered with `{text, usage}` as JSON (the only
 * response format this stand-in speaks). `usage` is what the model is billed by, as in the API: `whisper-1` by the
 * second (`{type: 'duration', seconds}`), the gpt-4o transcribe models by the token (`{type: 'tokens', …}`). The format is judged by the file name's extension, as the real API does; the 25 MB
 * limit answers 413. What the audio "says" is up to the test (`transcribeWith`); by default the file's bytes
 * read as UTF-8 after an `OggS` marker, so a test voice note can carry its own words.
 */
import type { ExtraRoute, HttpReply } from './server.js';

export const TRANSCRIPTION_PATH = '/v1/audio/transcriptions';
/** "Maximum content size limit (26214400) exceeded". */
const MAX_TRANSCRIPTION_BYTES = 26_214_400;
const FORMATS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];

export interface TranscriptionRecord {
  model: string;
  fileName: string;
  bytes: Buffer;
  responseFormat: string;
}

export type Transcriber = (t: TranscriptionRecord) => string | { error: { status: number; message: string } };

export interface TranscriptionFake {
  readonly transcriptions: TranscriptionRecord[];
  /** Decides the transcript (or an error) of each upload. */
  transcribeWith(fn: Transcriber): void;
}

export function defaultTranscript(t: TranscriptionRecord): string {
  return t.bytes.toString('utf8').replace(/^OggS/, '').trim();
}

export function transcriptionRoute(): { route: ExtraRoute; fake: TranscriptionFake } {
  const transcriptions: TranscriptionRecord[] = [];
  let transcriber: Transcriber = defaultTranscript;
  const error = (status: number, message: string): HttpReply => ({
    status,
    body: { error: { message, type: 'invalid_request_error', param: null, code: null } },
  });
  const route: ExtraRoute = async (rec, raw) => {
    const type = rec.headers['content-type'] ?? '';
    if (!type.startsWith('multipart/form-data')) return error(400, 'Invalid Content-Type header (expected multipart/form-data)');
    if (raw.length > MAX_TRANSCRIPTION_BYTES) return error(413, `Maximum content size limit (${MAX_TRANSCRIPTION_BYTES}) exceeded (${raw.length} bytes read)`);
    let form: FormData;
    try {
      form = await new Response(new Uint8Array(raw), { headers: { 'content-type': type } }).formData();
    } catch {
      return error(400, 'Could not parse multipart form');
    }
    const file = form.get('file');
    const model = form.get('model');
    if (typeof model !== 'string' || model === '') return error(400, 'you must provide a model parameter');
    if (!(file instanceof File)) return error(400, '1 validation error for Request\nbody -> file\n  field required (type=value_error.missing)');
    const ext = file.name.split('.').pop()?.toLowerCase() ?? '';
    if (!FORMATS.includes(ext)) return error(400, `Invalid file format. Supported formats: ${JSON.stringify(FORMATS)}`);
    const responseFormat = typeof form.get('response_format') === 'string' ? String(form.get('response_format')) : 'json';
    const record: TranscriptionRecord = { model, fileName: file.name, bytes: Buffer.from(await file.arrayBuffer()), responseFormat };
    transcriptions.push(record);
    const result = transcriber(record);
    if (typeof result !== 'string') return error(result.error.status, result.error.message);
    return { status: 200, body: { text: result, usage: usageOf(record, result) } };
  };
  return {
    route,
    fake: {
      transcriptions,
      transcribeWith: (fn) => void (transcriber = fn),
    },
  };
}

/**
 * What an upload is billed by: whisper-1 by the second (about 4,000 bytes a second here); the gpt-4o transcribe
 * models by audio tokens (about one per 100 bytes here; the real rate is per second of audio) in and a token per
 * word out. Exported so a test can work out what the gateway should have priced.
 */
export function transcriptionBilling(record: TranscriptionRecord, text: string): { seconds: number } | { input: number; output: number } {
  if (record.model.startsWith('whisper')) return { seconds: Math.max(1, Math.ceil(record.bytes.length / 4000)) };
  return { input: Math.max(1, Math.ceil(record.bytes.length / 100)), output: text.split(/\s+/).filter(Boolean).length };
}

function usageOf(record: TranscriptionRecord, text: string): Record<string, unknown> {
  const billed = transcriptionBilling(record, text);
  if ('seconds' in billed) return { type: 'duration', seconds: billed.seconds };
  const { input, output } = billed;
  return {
    type: 'tokens',
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_token_details: { audio_tokens: input, text_tokens: 0 },
  };
}
