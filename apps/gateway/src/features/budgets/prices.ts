/**
 * The one price table behind cost and budgets: HERALD_PRICES (USD per million tokens, with cache-read and
 * cache-write prices) over the built-in model table. A name matches a model the way the built-in table does: the
 * exact name, or a family name followed by a snapshot date, tag or version (`gpt-4.1-mini` prices
 * `gpt-4.1-mini-2025-04-14`), with an OpenRouter-style `vendor/` prefix ignored. Speech-to-text models have built-in
 * prices of their own (the chat table would price `gpt-4o-transcribe` as `gpt-4o`): whisper-1 is billed per minute
 * of audio, text-to-speech per character.
 */
import { estimateCostUsd, modelInfo, type ModelPrice, type Usage } from '@herald/agent-core';
import type { PricesSetting } from '../../support/config/profile-schema.js';

const BOUNDARY = /^[-:@.]/;
const SECONDS_PER_MINUTE = 60;

/** A price that may also bill audio heard by the minute or text read out by the character (USD). */
export type CallPrice = ModelPrice & { perMinute?: number; perMillionChars?: number };

/** What a call is billed by besides tokens. */
export interface BilledBesidesTokens {
  /** Seconds of audio transcribed (whisper-1). */
  audioSeconds?: number;
  /** Characters read out (text-to-speech). */
  characters?: number;
}

/**
 * OpenAI's speech prices. Speech-to-text: USD per million tokens, whisper-1 per minute of audio; the token-billed
 * models report audio and prompt tokens together as input, and Herald sends no prompt, so input is priced as audio.
 * Text-to-speech reports no usage: priced per million characters read out (gpt-4o-mini-tts by OpenAI's estimate of
 * $0.015 a minute at about 1,000 characters a minute).
 */
const SPEECH_PRICES: Array<[string, CallPrice]> = [
  ['whisper-1', { input: 0, output: 0, perMinute: 0.006 }],
  ['gpt-4o-transcribe', { input: 6, output: 10 }],
  ['gpt-4o-mini-transcribe', { input: 3, output: 5 }],
  ['tts-1', { input: 0, output: 0, perMillionChars: 15 }],
  ['tts-1-hd', { input: 0, output: 0, perMillionChars: 30 }],
  ['gpt-4o-mini-tts', { input: 0, output: 0, perMillionChars: 15 }],
];
const CHARS_PER_PRICE_UNIT = 1_000_000;

export class PriceTable {
  private readonly own: Array<[string, CallPrice]>;

  constructor(prices: PricesSetting) {
    this.own = Object.entries(prices).map(([name, p]) => [
      bare(name),
      {
        input: p.input,
        output: p.output,
        ...(p.cache_read !== undefined && { cacheRead: p.cache_read }),
        ...(p.cache_write !== undefined && { cacheWrite: p.cache_write }),
        ...(p.per_minute !== undefined && { perMinute: p.per_minute }),
        ...(p.per_million_chars !== undefined && { perMillionChars: p.per_million_chars }),
      },
    ]);
  }

  /** The price of a model (`gpt-4.1-mini` or `openai:gpt-4.1-mini`); undefined when no table knows it. */
  priceOf(model: string): CallPrice | undefined {
    const name = bare(model);
    return longestMatch(this.own, name) ?? longestMatch(SPEECH_PRICES, name) ?? modelInfo(name)?.price;
  }

  /** USD of one call; 0 for a model without a price (its tokens still count against token budgets). */
  costOf(model: string, usage: Usage, billed: BilledBesidesTokens = {}): number {
    const price = this.priceOf(model);
    const tokens = estimateCostUsd(bare(model), usage, price) ?? 0;
    const audio = ((price?.perMinute ?? 0) * (billed.audioSeconds ?? 0)) / SECONDS_PER_MINUTE;
    const read = ((price?.perMillionChars ?? 0) * (billed.characters ?? 0)) / CHARS_PER_PRICE_UNIT;
    return tokens + audio + read;
  }
}

/** The entry whose name is the model's, or the longest that is a family name of it (followed by a date, tag, …). */
function longestMatch(entries: ReadonlyArray<[string, CallPrice]>, name: string): CallPrice | undefined {
  let best: [string, CallPrice] | undefined;
  for (const entry of entries) {
    const [key] = entry;
    const hit = name === key || (name.startsWith(key) && BOUNDARY.test(name.slice(key.length)));
    if (hit && (best === undefined || key.length > best[0].length)) best = entry;
  }
  return best?.[1];
}

/** Without a `provider:` prefix (when the rest is not a tag) or a `vendor/` one, lower-case. */
function bare(model: string): string {
  let name = model.trim().toLowerCase();
  const colon = name.indexOf(':');
  // `openai:gpt-4.1` → `gpt-4.1`; `llama3.1:8b` (an Ollama tag) stays.
  if (colon > 0 && /^[a-z][a-z0-9_-]*$/.test(name.slice(0, colon)) && !/^\d/.test(name.slice(colon + 1))) name = name.slice(colon + 1);
  const slash = name.lastIndexOf('/');
  return slash >= 0 ? name.slice(slash + 1) : name;
}
