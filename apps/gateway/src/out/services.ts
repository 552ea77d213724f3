/**
 * What a worker needs to send files and voice replies, built once per process from the config: the limits,
 * whether pictures in replies are fetched, how (web_fetch's address rules), the text-to-speech model (null when
 * HERALD_TTS_MODEL is unset: then no voice replies, and no per-turn look-up of /voice either) and /voice itself.
 */
import { createSpeechSynthesizer, type SpeechSynthesizer, type WebFetchOptions } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';
import type { ProviderCatalog } from '../support/config/providers.js';
import type { VoiceReplies } from '../features/sessions/voice-replies.js';
import { outboundLimits, type OutboundLimits } from './limits.js';

export interface OutboundServices {
  readonly limits: OutboundLimits;
  readonly replyPictures: boolean;
  readonly fetch: WebFetchOptions;
  readonly speech: SpeechSynthesizer | null;
  readonly voice: VoiceReplies;
}

/** Throws ModelNotConfiguredError (naming OPENAI_API_KEY) when HERALD_TTS_MODEL is set without OpenAI settings. */
export function openOutboundServices(config: HeraldConfig, voice: VoiceReplies, providers: ProviderCatalog): OutboundServices {
  // The speech model's keys are OpenAI's pool, shared with the chat models (and their cooldowns).
  const speech = config.ttsModel ? createSpeechSynthesizer({ provider: providers.configFor(config.ttsModel), voice: config.ttsVoice }) : null;
  return {
    limits: outboundLimits(config),
    replyPictures: config.replyImages,
    fetch: { allowPrivate: config.fetchAllowPrivate },
    speech,
    voice,
  };
}
