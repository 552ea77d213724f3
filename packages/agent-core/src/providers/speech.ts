/**
 * Text to speech through the `openai` SDK (`audio.speech.create`, POST /v1/audio/speech): OpenAI itself or a
 * compatible server. Voice replies use it: Ogg Opus for Telegram voice notes, MP3 for audio files elsewhere.
 * Failures come back as ProviderError (classifyError), so the caller can say briefly why there is no voice reply.
 */
import OpenAI from 'openai';
import { classifyError } from './errors.js';
import { OPENAI_DEFAULT_BASE_URL } from './openai.js';

/** The speech API reads at most this many characters per request. */
export const SPEECH_MAX_INPUT_CHARS = 4096;
export const SPEECH_TIMEOUT_MS = 120_000;

export type SpeechFormat = 'opus' | 'mp3';

export interface SpeechConfig {
  model: string;
  voice: string;
  apiKey: string;
  baseUrl?: string;
  timeoutMs?: number;
}

export interface SpeechSynthesizer {
  readonly model: string;
  /** The audio for `text` (at most SPEECH_MAX_INPUT_CHARS): an Ogg Opus stream for `opus`, MP3 otherwise. */
  speak(text: string, format: SpeechFormat, signal?: AbortSignal): Promise<Buffer>;
}

export function createSpeechSynthesizer(cfg: SpeechConfig): SpeechSynthesizer {
  // One retry for a dropped connection; the caller falls back to text alone when this fails.
  const client = new OpenAI({ apiKey: cfg.apiKey || 'no-key', baseURL: cfg.baseUrl ?? OPENAI_DEFAULT_BASE_URL, maxRetries: 1, timeout: cfg.timeoutMs ?? SPEECH_TIMEOUT_MS });
  return {
    model: cfg.model,
    async speak(text, format, signal) {
      try {
        const res = await client.audio.speech.create({ model: cfg.model, voice: cfg.voice, input: text, response_format: format }, { signal });
        return Buffer.from(await res.arrayBuffer());
      } catch (err) {
        throw classifyError(err);
      }
    },
  };
}
