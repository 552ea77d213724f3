import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';
import { progressSettings } from './progress.js';

const settings = (env: Record<string, string>) => progressSettings(loadConfig({ env, file: null }));

describe('progressSettings', () => {
  it('streams and shows a line per new tool on every platform by default, as Hermes does', () => {
    const s = settings({});
    expect(s.streaming).toEqual({ telegram: true, discord: true, slack: true });
    expect(s.toolProgress).toEqual({ telegram: 'new', discord: 'new', slack: 'new' });
  });

  it('takes a platform setting over the gateway-wide one', () => {
    const s = settings({ HERALD_STREAMING: 'false', SLACK_STREAMING: 'true', TELEGRAM_TOOL_PROGRESS: 'off', HERALD_TOOL_PROGRESS: 'all' });
    expect(s.streaming).toEqual({ telegram: false, discord: false, slack: true });
    expect(s.toolProgress).toEqual({ telegram: 'off', discord: 'all', slack: 'all' });
  });
});
