/**
 * OpenAI's text-to-speech endpoint, POST /v1/audio/speech: JSON `{model, input, voice, response_format?,
 * instructions?, speed?}` → the audio bytes (200, `audio/mpeg` for mp3, `audio/opus` for opus — an Ogg Opus
 * stream —, `audio/wav`, `audio/pcm`), or `{error:{message,type,param,code}}` for what the API refuses: no model,
 * no input or more than 4096 characters of it, an unknown voice or format, a speed outside 0.25–4. The audio is
 * silence whose length follows the text (about 15 characters a second), so a caller can check the duration.
 * `aac` and `flac` are valid for the API but not made here: the stand-in answers them with a 400 naming itself.
 */
import { mp3Silence } from '../media/mp3.js';
import { oggOpusSilence } from '../media/ogg.js';
import { isRecord, type ExtraRoute, type HttpReply } from './server.js';
import type { FakeSpeech, RecordedRequest, StepError } from './types.js';

export const SPEECH_PATH = '/v1/audio/speech';
export const SPEECH_MAX_INPUT = 4096;
const VOICES = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar']);
const FORMATS = new Set(['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm']);
const CHARS_PER_SECOND = 15;
/** The API's PCM: 24 kHz, 16-bit little-endian, mono. */
const PCM_RATE = 24_000;

function apiError(status: number, message: string, param: string | null, code: string | null, type = 'invalid_request_error'): HttpReply {
  return { status, body: { error: { message, type, param, code } } };
}

function wav(durationSec: number): Buffer {
  const data = Buffer.alloc(Math.round(durationSec * PCM_RATE) * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(PCM_RATE, 24);
  header.writeUInt32LE(PCM_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function check(body: Record<string, unknown>): HttpReply | undefined {
  if (typeof body.model !== 'string' || body.model === '') return apiError(400, 'you must provide a model parameter', null, null);
  if (typeof body.input !== 'string' || body.input === '') return apiError(400, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  if (body.input.length > SPEECH_MAX_INPUT) {
    return apiError(
      400,
      `Invalid 'input': string too long. Expected a string with maximum length ${SPEECH_MAX_INPUT}, but got a string with length ${body.input.length} instead.`,
      'input',
      'string_above_max_length',
    );
  }
  if (typeof body.voice !== 'string' || !VOICES.has(body.voice)) {
    return apiError(400, `Invalid value for 'voice': ${JSON.stringify(body.voice ?? null)}.`, 'voice', 'invalid_value');
  }
  const format = body.response_format ?? 'mp3';
  if (typeof format !== 'string' || !FORMATS.has(format)) {
    return apiError(400, `Invalid value for 'response_format': ${JSON.stringify(format)}.`, 'response_format', 'invalid_value');
  }
  if (body.speed !== undefined && (typeof body.speed !== 'number' || body.speed < 0.25 || body.speed > 4)) {
    return apiError(400, "Invalid 'speed': must be between 0.25 and 4.0.", 'speed', 'invalid_value');
  }
  return undefined;
}

export function createSpeech(): { route: ExtraRoute; control: FakeSpeech } {
  const seen: RecordedRequest[] = [];
  const failures: StepError[] = [];
  const route: ExtraRoute = (req) => {
    seen.push(req);
    const failure = failures.shift();
    if (failure) {
      const reply = apiError(
        failure.status,
        failure.message ?? `stand-in failure ${failure.status}`,
        null,
        null,
        failure.status === 429 ? 'requests' : 'server_error',
      );
      return failure.retryAfter === undefined ? reply : { ...reply, headers: { 'retry-after': String(failure.retryAfter) } };
    }
    const body = isRecord(req.body) ? req.body : {};
    const invalid = check(body);
    if (invalid) return invalid;
    const seconds = Math.max(1, (body.input as string).length / CHARS_PER_SECOND) / ((body.speed as number | undefined) ?? 1);
    switch (body.response_format ?? 'mp3') {
      case 'mp3':
        return { status: 200, headers: { 'content-type': 'audio/mpeg' }, raw: mp3Silence(seconds) };
      case 'opus':
        return { status: 200, headers: { 'content-type': 'audio/opus' }, raw: oggOpusSilence(seconds, 'OpenAI stand-in') };
      case 'wav':
        return { status: 200, headers: { 'content-type': 'audio/wav' }, raw: wav(seconds) };
      case 'pcm':
        return { status: 200, headers: { 'content-type': 'audio/pcm' }, raw: wav(seconds).subarray(44) };
      default:
        return apiError(400, `the stand-in does not synthesise ${String(body.response_format)}; use mp3, opus, wav or pcm`, 'response_format', null);
    }
  };
  return { route, control: { requests: () => [...seen], failNext: (error) => void failures.push(error) } };
}
