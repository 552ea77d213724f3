/**
 * What a worker needs to turn files into model input: each platform's downloads, speech-to-text and the vision
 * describer when configured, and the limits. Built once per process from the config.
 */
import type { Provider } from '@herald/agent-core';
import type { PlatformFiles } from '@herald/adapters';
import type { HeraldConfig } from '../../support/config/load.js';
import { createImageDescriber, type DescribeImage } from './describe.js';
import { createTranscriber, type Transcribe } from './transcribe.js';

export interface MediaLimits {
  maxFileBytes: number;
  maxMessageBytes: number;
  maxImageBytes: number;
  maxImages: number;
  maxPages: number;
  maxChars: number;
}

export interface MediaServices {
  /** Downloads for a platform (throws for a platform that is not configured). */
  files: (platform: string, account?: string) => PlatformFiles;
  /** Null when HERALD_STT_MODEL is not set. */
  transcribe: Transcribe | null;
  /** Null when no side model can see (HERALD_VISION_MODEL, HERALD_AUXILIARY_MODEL). */
  describe: DescribeImage | null;
  limits: MediaLimits;
}

export function mediaLimits(config: HeraldConfig): MediaLimits {
  return {
    maxFileBytes: config.mediaMaxFileBytes,
    maxMessageBytes: config.mediaMaxMessageBytes,
    maxImageBytes: config.mediaMaxImageBytes,
    maxImages: config.mediaMaxImages,
    maxPages: config.mediaMaxPages,
    maxChars: config.mediaMaxChars,
  };
}

/** `describer`: the side-task chain of vision-capable models (features/sessions/models.ts SideTaskModels), or null. */
export function createMediaServices(
  config: HeraldConfig,
  files: (platform: string, account?: string) => PlatformFiles,
  describer: Provider | null,
): MediaServices {
  // Speech-to-text uses the first OpenAI key (the pool's rotation is the chat models' business).
  const transcribe = config.sttModel
    ? createTranscriber({ model: config.sttModel, apiKey: config.keyPools.openai?.[0] ?? config.openai.apiKey, baseUrl: config.openai.baseUrl })
    : null;
  return {
    files,
    transcribe,
    describe: describer ? createImageDescriber(describer) : null,
    limits: mediaLimits(config),
  };
}
