import { afterEach, describe, expect, it } from 'vitest';
import { gatewayThreshold, gatewayWarningThreshold, thresholdFor } from './windows.js';
import { IMAGE_TOKENS, estimateMessagesTokens, estimateRequestTokens } from './tokens.js';
import { effectiveContextWindow, forgetLearntContextWindows, learnContextWindow, stepDownWindow } from './windows.js';

afterEach(() => forgetLearntContextWindows());

describe('thresholds', () => {
  it('window 200K: the gateway compresses at 170,000 tokens and warns at 190,000', () => {
    expect(gatewayThreshold(200_000)).toBe(170_000);
    expect(gatewayWarningThreshold(200_000)).toBe(190_000);
  });

  it("the loop's ratio defaults to 50 % and is clamped to [0.10, 0.80]", () => {
    expect(thresholdFor(100_000)).toBe(50_000);
    expect(thresholdFor(100_000, 0.05)).toBe(10_000);
    expect(thresholdFor(100_000, 0.95)).toBe(80_000);
    expect(thresholdFor(100_000, 0.3)).toBe(30_000);
  });
});

describe('token estimates', () => {
  it('count characters / 4, tool calls and tool schemas included', () => {
    const text = { role: 'user' as const, content: 'x'.repeat(4_000) };
    expect(estimateMessagesTokens([text])).toBeGreaterThanOrEqual(1_000);
    expect(estimateMessagesTokens([text])).toBeLessThan(1_010);
    const call = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'f', arguments: 'y'.repeat(400) } }],
    };
    expect(estimateMessagesTokens([call])).toBeGreaterThan(100);
    const schema = { name: 'search', description: 'd'.repeat(4_000), parameters: {} };
    expect(estimateRequestTokens('', [text], [schema]) - estimateRequestTokens('', [text])).toBeGreaterThanOrEqual(1_000);
  });

  it("count each image shown at the provider's fixed estimate, and none for a stored reference (its bytes are not sent)", () => {
    const image = { mimeType: 'image/png', data: 'AAAA' };
    const shown = { role: 'user' as const, content: 'look', images: [image, image] };
    const plain = { role: 'user' as const, content: 'look' };
    expect(estimateMessagesTokens([shown], IMAGE_TOKENS.openai) - estimateMessagesTokens([plain])).toBe(2 * IMAGE_TOKENS.openai);
    expect(estimateRequestTokens('', [shown], [], IMAGE_TOKENS.anthropic) - estimateRequestTokens('', [plain])).toBe(2 * IMAGE_TOKENS.anthropic);
    const referenced = { ...plain, attachments: [{ platform: 'telegram', fileId: 'f', url: 'tg-file:f', kind: 'image' as const }] };
    expect(estimateMessagesTokens([referenced])).toBe(estimateMessagesTokens([plain]));
  });
});

describe('context windows', () => {
  it('the override wins over the table; a limit named by the provider lowers it for that model only', () => {
    expect(effectiveContextWindow('gpt-4.1-mini')).toBe(1_047_576);
    expect(effectiveContextWindow('gpt-4.1-mini', 50_000)).toBe(50_000);
    learnContextWindow('gpt-4.1-mini', 32_000);
    expect(effectiveContextWindow('gpt-4.1-mini')).toBe(32_000);
    expect(effectiveContextWindow('gpt-4.1-mini', 50_000)).toBe(32_000);
    expect(effectiveContextWindow('gpt-4o')).toBe(128_000);
  });

  it('with no limit named, the assumed window steps down 128K → 64K → 32K → 16K → 8K', () => {
    const steps = [1_047_576];
    while (steps.length < 7) steps.push(stepDownWindow(steps.at(-1) as number));
    expect(steps).toEqual([1_047_576, 128_000, 64_000, 32_000, 16_000, 8_000, 8_000]);
    expect(stepDownWindow(200_000)).toBe(128_000);
    expect(stepDownWindow(100_000)).toBe(64_000);
  });
});
