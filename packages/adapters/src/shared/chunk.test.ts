import { describe, expect, it } from 'vitest';
import { chunkMessage, fencesBalanced } from './chunk.js';

describe('chunkMessage', () => {
  it('returns short text unchanged, without a suffix', () => {
    expect(chunkMessage('hello', 4096)).toEqual(['hello']);
  });

  it('splits 10,000 characters of prose into 3 Telegram chunks, each within the limit and numbered', () => {
    const line = `${'word '.repeat(19)}end.`;
    const text = Array.from({ length: 100 }, () => line).join('\n');
    expect(text.length).toBeGreaterThanOrEqual(9_999);
    const chunks = chunkMessage(text, 4096);
    expect(chunks).toHaveLength(3);
    chunks.forEach((c, i) => {
      expect(c.length).toBeLessThanOrEqual(4096);
      expect(c.endsWith(` (${i + 1}/3)`)).toBe(true);
    });
    // Nothing is lost: joining the bodies gives back every line.
    const bodies = chunks.map((c) => c.replace(/ \(\d+\/3\)$/, ''));
    expect(bodies.join('\n')).toBe(text);
  });

  it('closes and reopens a code fence with its language across chunks', () => {
    const code = Array.from({ length: 400 }, (_, i) => `const x${i} = ${i};`).join('\n');
    const text = `Here is code:\n\`\`\`ts\n${code}\n\`\`\`\nDone.`;
    const chunks = chunkMessage(text, 2000);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(2000);
      // Balanced as sent: the suffix never sits on a closing fence line.
      expect(fencesBalanced(c)).toBe(true);
    }
    expect(chunks[0]).toMatch(/\n```\n\(1\/\d+\)$/);
    expect(chunks[1].startsWith('```ts\n')).toBe(true);
  });

  it('hard-splits a single line longer than the limit without breaking surrogate pairs', () => {
    const text = '😀'.repeat(3000); // 6000 UTF-16 units, no spaces or newlines
    const chunks = chunkMessage(text, 2000);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(2000);
      expect(c).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    }
    expect(chunks.map((c) => c.replace(/[ \n]\(\d+\/\d+\)$/, '')).join('')).toBe(text);
  });
});

describe('fencesBalanced', () => {
  it('detects an unclosed fence', () => {
    expect(fencesBalanced('```js\nx\n```')).toBe(true);
    expect(fencesBalanced('```js\nx')).toBe(false);
  });
});
