import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../support/config/load.js';
import { MAX_CACHED_MODELS, SessionModels } from './models.js';

const config = loadConfig({ file: null, env: { HERALD_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: 'http://127.0.0.1:9' } });

describe('SessionModels', () => {
  it('builds a provider once per model, and keeps a bounded number however many models sessions choose', () => {
    const models = new SessionModels(config);
    const first = models.provider('openai:model-0');
    expect(models.provider('openai:model-0')).toBe(first);
    for (let i = 1; i < MAX_CACHED_MODELS + 20; i++) {
      expect(models.provider(`openai:model-${i}`).model).toBe(`model-${i}`);
      expect(models.cachedCount).toBeLessThanOrEqual(MAX_CACHED_MODELS);
    }
    expect(models.cachedCount).toBe(MAX_CACHED_MODELS);
    // The oldest was let go: asking again builds it afresh (same model, new object).
    const again = models.provider('openai:model-0');
    expect(again).not.toBe(first);
    expect(again.model).toBe('model-0');
  });
});
