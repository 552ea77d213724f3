import { describe, expect, it } from 'vitest';
import { DEFAULT_CONTEXT_WINDOW, MODELS, contextWindowFor, estimateCostUsd, modelInfo, overrideFor } from './models.js';

describe('contextWindowFor', () => {
  it.each([
    ['gpt-4.1', 1_047_576],
    ['gpt-4.1-mini-2025-04-14', 1_047_576],
    ['gpt-4o', 128_000],
    ['gpt-4o-mini', 128_000],
    ['o3', 200_000],
    ['o4-mini', 200_000],
    ['gpt-5', 400_000],
    ['gpt-5-nano', 400_000],
    ['claude-sonnet-4-5', 200_000],
    ['claude-sonnet-4-5-20250929', 200_000],
    ['claude-opus-4-1', 200_000],
    ['claude-haiku-4-5', 200_000],
    ['anthropic/claude-sonnet-4.5', 200_000],
    ['openai/gpt-4o-mini', 128_000],
    ['claude-opus-4-6', 1_000_000],
    ['anthropic/claude-sonnet-4.6', 1_000_000],
    ['gpt-5.2-2025-12-11', 400_000],
  ])('%s → %i', (model, window) => {
    expect(contextWindowFor(model)).toBe(window);
  });

  it('matches whole name parts only, so gpt-4.5 is not mistaken for gpt-4 (8k)', () => {
    expect(contextWindowFor('gpt-4-0613')).toBe(8_192);
    expect(contextWindowFor('gpt-4.5-preview')).toBe(DEFAULT_CONTEXT_WINDOW);
  });

  it('falls back to 128k for unknown models and lets an override win', () => {
    expect(contextWindowFor('llama3.1:8b')).toBe(128_000);
    expect(contextWindowFor('gpt-4o', 32_768)).toBe(32_768);
    expect(contextWindowFor('gpt-4o', 0)).toBe(128_000);
  });
});

describe('estimateCostUsd', () => {
  it('prices input, output and cache reads for OpenAI models', () => {
    // gpt-4.1-mini: $0.40 in, $1.60 out, $0.10 cached per million tokens.
    const cost = estimateCostUsd('gpt-4.1-mini', { input: 1_000_000, output: 500_000, cacheRead: 2_000_000, cacheWrite: 0 });
    expect(cost).toBeCloseTo(0.4 + 0.8 + 0.2, 10);
  });

  it('prices cache writes for Anthropic models', () => {
    // claude-sonnet-4-5: $3 in, $15 out, $0.30 read, $3.75 write.
    const cost = estimateCostUsd('claude-sonnet-4-5-20250929', { input: 10_000, output: 2_000, cacheRead: 100_000, cacheWrite: 20_000 });
    expect(cost).toBeCloseTo(0.03 + 0.03 + 0.03 + 0.075, 10);
  });

  it('is undefined when the price is unknown, rather than a misleading zero', () => {
    expect(estimateCostUsd('llama3.1:8b', { input: 10, output: 10, cacheRead: 0, cacheWrite: 0 })).toBeUndefined();
    expect(modelInfo('claude-some-future-model')?.contextWindow).toBe(200_000);
  });
});

describe('overrideFor (per-model settings such as HERALD_MAX_TOKENS)', () => {
  it('matches a family name to its snapshots and vendor-prefixed ids; the longest name wins', () => {
    const perModel = { 'claude-opus-4-6': 32_000, 'gpt-5': 16_000, 'gpt-5-mini': 8_000 };
    expect(overrideFor('claude-opus-4-6-20260205', perModel)).toBe(32_000);
    expect(overrideFor('anthropic/claude-opus-4.6', perModel)).toBe(32_000);
    expect(overrideFor('gpt-5-mini-2025-08-07', perModel)).toBe(8_000);
    expect(overrideFor('gpt-5', perModel)).toBe(16_000);
    expect(overrideFor('gpt-4o', perModel)).toBeUndefined();
    expect(modelInfo('claude-sonnet-4-6')?.maxOutput).toBe(128_000);
  });
});

describe('modelInfo lookups', () => {
  it('answers a name asked again as the first time, also after hundreds of other names', () => {
    const first = modelInfo('openai/gpt-4.1-mini-2025-04-14');
    expect(first).toBe(MODELS['gpt-4.1-mini']);
    for (let i = 0; i < 300; i++) expect(modelInfo(`local-model-${i}`)).toBeUndefined();
    expect(modelInfo('openai/gpt-4.1-mini-2025-04-14')).toBe(first);
    expect(modelInfo('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(MODELS['claude-sonnet-4-5']);
  });
});
