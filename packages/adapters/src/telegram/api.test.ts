import { describe, expect, it } from 'vitest';
import { normalizeApiRoot } from './api.js';

describe('normalizeApiRoot', () => {
  it('keeps a path prefix by ending it with a slash (telegraf would drop it otherwise)', () => {
    expect(normalizeApiRoot('http://127.0.0.1:8081/telegram')).toBe('http://127.0.0.1:8081/telegram/');
    expect(normalizeApiRoot('http://127.0.0.1:8081/telegram/')).toBe('http://127.0.0.1:8081/telegram/');
  });

  it('leaves a bare host as it is', () => {
    expect(normalizeApiRoot('https://api.telegram.org')).toBe('https://api.telegram.org');
    expect(normalizeApiRoot('https://api.telegram.org/')).toBe('https://api.telegram.org');
  });
});
