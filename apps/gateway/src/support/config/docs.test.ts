/**
 * The settings table is the source of truth; the configuration reference (docs/configuration.md) and .env.example
 * must not drift from it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { walkSettings } from './settings.js';

const root = new URL('../../../../..', import.meta.url);
const reference = readFileSync(new URL('docs/configuration.md', root), 'utf8');
const envExample = readFileSync(new URL('.env.example', root), 'utf8');
const PLATFORM_PREFIX = /^(TELEGRAM|DISCORD|SLACK|WHATSAPP|MATRIX)_/;

describe('configuration docs', () => {
  const envs = [...walkSettings()].map(([, s]) => s.env);

  it('docs/configuration.md documents every setting (platform ones may use the <PLATFORM>_ form)', () => {
    const missing = envs.filter((env) => !reference.includes(env) && !reference.includes(env.replace(PLATFORM_PREFIX, '<PLATFORM>_')));
    expect(missing).toEqual([]);
  });

  it('.env.example lists every setting with its default', () => {
    for (const [, s] of walkSettings()) {
      expect(envExample).toContain(`#${s.env}=${s.fallback === undefined ? '' : String(s.fallback)}\n`);
    }
  });
});
