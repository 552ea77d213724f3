import { describe, expect, it } from 'vitest';
import type { SessionOverview } from '@herald/agent-core';
import { ago, preview, sessionLabel, shortId, userHtml } from './session-label.js';

const BASE = { id: '019af3c2-7d10-7abc-8def-0123456789ab', source: 'telegram', title: null, chatId: '1', firstUserText: null } as const;
type Who = Pick<SessionOverview, 'source' | 'userId' | 'userName' | 'key'>;

describe('session labels', () => {
  it('names a session by its title, else the start of its first message, else its short id', () => {
    expect(sessionLabel({ ...BASE, title: 'Trip to Oslo', firstUserText: 'hello' })).toBe('Trip to Oslo');
    expect(sessionLabel({ ...BASE, firstUserText: 'hello\n  there' })).toBe('“hello there”');
    expect(sessionLabel(BASE)).toBe('Session 019af3c2…89ab');
  });

  it('names an API session by the name the client gave; a one-off request by its message', () => {
    const api = { ...BASE, source: 'api', chatId: 'support-bot', firstUserText: 'hi' } as const;
    expect(sessionLabel(api)).toBe('support-bot');
    expect(sessionLabel({ ...api, chatId: 'once.4f2a' })).toBe('“hi”');
    expect(sessionLabel({ ...api, chatId: 'once.4f2a', firstUserText: null })).toBe('One-off API request');
  });

  it('cuts a long first message at a word, with an ellipsis', () => {
    const text = 'Could you please help me plan a three week trip through Norway in the early summer';
    expect(preview(text)).toBe('Could you please help me plan a three week trip through…');
    expect(preview('x'.repeat(80))).toBe(`${'x'.repeat(60)}…`);
  });

  it('keeps the id prefix and its random tail, so same-minute sessions differ in it too', () => {
    expect(shortId('019af3c2-7d10-7abc-8def-0123456789ab')).toBe('019af3c2…89ab');
    expect(shortId('seed-1')).toBe('seed-1');
  });

  it('shows who: the display name beside the platform id; for the API the caller and its key', () => {
    const tg: Who = { source: 'telegram', userId: '42', userName: 'Ann <3', key: 'agent:main:telegram:dm:42' };
    expect(userHtml(tg).value).toBe('Ann &lt;3 <span class="muted">42</span>');
    expect(userHtml({ ...tg, userName: null }).value).toBe('42');
    const api: Who = { source: 'api', userId: 'alice', userName: null, key: 'agent:main:api:dm:key-0123456789:alice' };
    expect(userHtml(api).value).toBe('alice <span class="muted">via API key key-0123456789</span>');
  });

  it('says how long ago, with the exact time in the title', () => {
    const now = Date.UTC(2026, 0, 2, 12, 0, 0);
    expect(ago(now - 20_000, now).value).toBe('<time datetime="2026-01-02T11:59:40.000Z" title="2026-01-02 11:59 UTC">just now</time>');
    expect(ago(now - 5 * 60_000, now).value).toContain('>5 min ago<');
    expect(ago(now - 3 * 3_600_000, now).value).toContain('>3 h ago<');
    expect(ago(now - 3 * 86_400_000, now).value).toContain('>3 days ago<');
  });
});
