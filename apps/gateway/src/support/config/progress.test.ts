import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';
import { progressSettings } from './progress.js';

const settings = (env: Record<string, string>) => progressSettings(loadConfig({ env, file: null }));

describe('progressSettings', () => {
  it('streams and shows a line per new tool on every platform that can edit by default, as Hermes does', () => {
    const s = settings({});
    // WhatsApp cannot edit a sent message: no stream to edit, and each tool line would be a message of its own.
    expect(s.streaming).toEqual({ telegram: true, discord: true, slack: true, whatsapp: false, matrix: true });
    expect(s.toolProgress).toEqual({ telegram: 'new', discord: 'new', slack: 'new', whatsapp: 'off', matrix: 'new' });
  });

  it('takes a platform setting over the gateway-wide one', () => {
    const s = settings({ HERALD_STREAMING: 'false', SLACK_STREAMING: 'true', TELEGRAM_TOOL_PROGRESS: 'off', HERALD_TOOL_PROGRESS: 'all' });
    expect(s.streaming).toEqual({ telegram: false, discord: false, slack: true, whatsapp: false, matrix: false });
    expect(s.toolProgress).toEqual({ telegram: 'off', discord: 'all', slack: 'all', whatsapp: 'all', matrix: 'all' });
  });
});
