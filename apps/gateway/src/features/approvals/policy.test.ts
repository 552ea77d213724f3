import { describe, expect, it } from 'vitest';
import { argumentMasker } from './mask.js';
import { approvalReason } from './policy.js';

describe('approval policy', () => {
  const none = { tools: [], exempt: [] };

  it('asks for destructive MCP tools and execute_code by default, and for what the profile names (globs too)', () => {
    expect(approvalReason(none, { name: 'tickets__delete', destructive: true })).toBe('destructive');
    expect(approvalReason(none, { name: 'execute_code' })).toBe('code');
    expect(approvalReason(none, { name: 'tickets__list' })).toBeNull();
    const listed = { tools: ['github__create_*', 'memory'], exempt: [] };
    expect(approvalReason(listed, { name: 'github__create_issue' })).toBe('listed');
    expect(approvalReason(listed, { name: 'github__create' })).toBeNull();
    expect(approvalReason(listed, { name: 'memory' })).toBe('listed');
    expect(approvalReason(listed, { name: 'memory_x' })).toBeNull();
  });

  it('an exemption wins over the defaults and the list; glob characters other than * and ? are literal', () => {
    const policy = { tools: ['*'], exempt: ['trusted__*', 'execute_code'] };
    expect(approvalReason(policy, { name: 'trusted__wipe', destructive: true })).toBeNull();
    expect(approvalReason(policy, { name: 'execute_code' })).toBeNull();
    expect(approvalReason(policy, { name: 'current_time' })).toBe('listed');
    expect(approvalReason({ tools: ['a.b', 'x?'], exempt: [] }, { name: 'axb' })).toBeNull();
    expect(approvalReason({ tools: ['a.b', 'x?'], exempt: [] }, { name: 'xy' })).toBe('listed');
  });
});

describe('argument masking', () => {
  it('censors secret-looking keys at any depth and scrubs configured secrets wherever they appear', () => {
    const mask = argumentMasker(['sk-live-0123456789']);
    const shown = mask({
      id: 7,
      api_key: 'abc',
      nested: { Authorization: 'Bearer x', list: [{ client_secret: 's' }], note: 'key is sk-live-0123456789' },
      password: 'p',
    });
    expect(shown).toBe(
      '{"id":7,"api_key":"[redacted]","nested":{"Authorization":"[redacted]","list":[{"client_secret":"[redacted]"}],"note":"key is [redacted]"},"password":"[redacted]"}',
    );
  });

  it('cuts long arguments and says how much was left out', () => {
    const shown = argumentMasker([])({ text: 'x'.repeat(2_000) });
    expect(shown.startsWith('{"text":"xxx')).toBe(true);
    expect(shown).toMatch(/… \(1411 more characters\)$/);
  });
});
