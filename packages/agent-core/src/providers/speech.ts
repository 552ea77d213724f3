/**
 * Text to speech through the `openai` SDK (`audio.speech.create`, POST /v1/audio/speech): OpenAI itself or a
 * compatible server. Voice replies use it: Ogg Opus for Telegram voice notes, MP3 for audio files elsewhere.
 * Keys come from the provider's pool like a model's (key-pool.ts `withPooledKey`: a spent key is cooled and the
 * next one tried); failures come back as ProviderError, so the caller can say briefly why there is no voice reply.
 */
import OpenAI from 'openai';
import { classifyError } from './errors.js';
import { OPENAI_DEFAULT_BASE_URL } from './openai.js';
import { ClientPool, keySourceOf } from './request.js';
import { createTransport } from './transport.js';
import type { ProviderConfig } from './types.js';
import { withPooledKey } from './key-pool.js';

/** The speech API reads at most this many characters per request. */
export const SPEECH_MAX_INPUT_CHARS = 4096;
const SPEECH_TIMEOUT_MS = 120_000;

export type SpeechFormat = 'opus' | 'mp3';

export interface SpeechConfig {
  /** The model's provider settings (base URL, key pool), as for a chat model: `openai:gpt-4o-mini-tts`. */
  provider: ProviderConfig;
  voice: string;
}

export interface SpeechSynthesizer {
  readonly model: string;
  /** The audio for `text` (at most SPEECH_MAX_INPUT_CHARS): an Ogg Opus stream for `opus`, MP3 otherwise. */
  speak(text: string, format: SpeechFormat, signal: AbortSignal): Promise<Buffer>;
}

export function createSpeechSynthesizer({ provider: cfg, voice }: SpeechConfig): SpeechSynthesizer {
  const baseURL = cfg.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const keys = keySourceOf(cfg);
  // One retry of the SDK's own for a dropped connection; the caller falls back to text alone when this fails.
  const clients = new ClientPool((key) => {
    const transport = createTransport();
    const client = new OpenAI({ apiKey: key.key, baseURL, maxRetries: 1, timeout: cfg.timeoutMs ?? SPEECH_TIMEOUT_MS, fetch: transport.fetch });
    return { client, retire: transport.retire };
  });
  return {
    model: cfg.model,
    speak: (text, format, signal) =>
      withPooledKey(keys, signal, async (key) => {
        try {
          const res = await clients.get(key).audio.speech.create({ model: cfg.model, voice, input: text, response_format: format }, { signal });
          return Buffer.from(await res.arrayBuffer());
        } catch (err) {
          throw classifyError(err);
        }
      }),
  };
}
