/**
 * What a worker needs to turn files into model input: each platform's downloads, speech-to-text and the vision
 * describer when configured, and the limits. Built once per process from the config.
 */
import { createProvider, type Provider } from '@herald/agent-core';
import type { PlatformFiles } from '@herald/adapters';
import type { HeraldConfig } from '../config/load.js';
import { ProviderCatalog } from '../config/providers.js';
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
  /** Null when HERALD_VISION_MODEL is not set. */
  describe: DescribeImage | null;
  /** `provider:model` of the describer, named to the main model. */
  describerName?: string;
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

/** `catalog`: the process's provider catalog, so the describer shares the key pools of the models it runs on. */
export function createMediaServices(config: HeraldConfig, files: (platform: string, account?: string) => PlatformFiles, catalog = new ProviderCatalog(config)): MediaServices {
  // Speech-to-text uses the first OpenAI key (the pool's rotation is the chat models' business).
  const transcribe = config.sttModel
    ? createTranscriber({ model: config.sttModel, apiKey: config.keyPools.openai?.[0] ?? config.openai.apiKey, baseUrl: config.openai.baseUrl })
    : null;
  let describer: Provider | null = null;
  if (config.visionModel) {
    // The describer must see: it is told so whatever the table says.
    describer = createProvider({ ...catalog.configFor(config.visionModel), vision: true });
  }
  return {
    files,
    transcribe,
    describe: describer ? createImageDescriber(describer) : null,
    ...(config.visionModel && { describerName: config.visionModel }),
    limits: mediaLimits(config),
  };
}
