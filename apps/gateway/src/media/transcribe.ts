/**
 * Speech-to-text through the OpenAI audio transcription API (`openai` SDK, `audio.transcriptions.create`), with
 * the model of HERALD_STT_MODEL and the key and base URL of the OpenAI provider settings.
 */
import OpenAI, { toFile } from 'openai';

/** The API refuses uploads over 25 MB. */
export const STT_MAX_BYTES = 25 * 1024 * 1024;
/** A transcription that takes longer than this fails (a long voice note takes seconds, not minutes). */
const STT_TIMEOUT_MS = 120_000;

export type Transcribe = (audio: Buffer, uploadName: string, signal?: AbortSignal) => Promise<string>;

export interface TranscriberConfig {
  /** `openai:<model>`. */
  model: string;
  apiKey?: string;
  baseUrl?: string;
}

export function createTranscriber(cfg: TranscriberConfig): Transcribe {
  const model = cfg.model.replace(/^openai:/, '');
  // Retries stay with the caller: a failed transcription is reported, and /retry sends the message again.
  const client = new OpenAI({ apiKey: cfg.apiKey || 'no-key', baseURL: cfg.baseUrl, maxRetries: 0, timeout: STT_TIMEOUT_MS });
  return async (audio, uploadName, signal) => {
    const result = await client.audio.transcriptions.create({ file: await toFile(audio, uploadName), model }, { signal });
    return result.text.trim();
  };
}
