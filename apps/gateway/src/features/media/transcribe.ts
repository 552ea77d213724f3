/**
 * Speech-to-text through the OpenAI audio transcription API (`openai` SDK, `audio.transcriptions.create`), with
 * the model of HERALD_STT_MODEL and the key and base URL of the OpenAI provider settings.
 */
import OpenAI, { toFile } from 'openai';
import { emptyUsage } from '@herald/agent-core';
import type { ModelCall } from '../budgets/meter.js';

/** The API refuses uploads over 25 MB. */
export const STT_MAX_BYTES = 25 * 1024 * 1024;
/** A transcription that takes longer than this fails (a long voice note takes seconds, not minutes). */
const STT_TIMEOUT_MS = 120_000;

/**
 * The transcript, and what it is billed by: models billed by token (gpt-4o-transcribe and kin) report audio and text
 * tokens in `usage`; those billed by the minute (whisper-1) report a duration (`seconds`), which counts no tokens.
 */
interface Transcript {
  text: string;
  /** The transcription call: HERALD_STT_MODEL's tokens, or the seconds of audio it was billed for. */
  call: ModelCall;
}

export type Transcribe = (audio: Buffer, uploadName: string, signal?: AbortSignal) => Promise<Transcript>;

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
    const call: ModelCall = { by: { name: 'openai', model }, usage: emptyUsage() };
    if (result.usage?.type === 'tokens') {
      call.usage.input = result.usage.input_tokens;
      call.usage.output = result.usage.output_tokens;
    }
    if (result.usage?.type === 'duration') call.audioSeconds = result.usage.seconds;
    return { text: result.text.trim(), call };
  };
}
