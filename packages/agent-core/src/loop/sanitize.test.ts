import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { MISSING_RESULT_TEXT, sanitizeHistory, sanitizeText } from './transcript.js';

const call = (id: string, name = 'lookup') => ({ id, type: 'function' as const, function: { name, arguments: '{}' } });

describe('sanitizeText', () => {
  it('replaces lone surrogates with U+FFFD and keeps valid pairs', () => {
    expect(sanitizeText('a\uD83Db')).toBe('a\uFFFDb');
    expect(sanitizeText('a\uDE00b')).toBe('a\uFFFDb');
    expect(sanitizeText('end\uD83D')).toBe('end\uFFFD');
    expect(sanitizeText('ok 😀')).toBe('ok 😀');
  });
});

describe('sanitizeHistory', () => {
  it('merging two user messages keeps the files and images of both', () => {
    const ref = (id: string) => ({ platform: 'slack', fileId: id, url: `https://files/${id}`, kind: 'image' as const });
    const merged = sanitizeHistory([
      { role: 'user', content: 'one', attachments: [ref('a')], images: [{ mimeType: 'image/png', data: 'A' }] },
      { role: 'user', content: 'two', attachments: [ref('b')] },
    ]);
    expect(merged).toEqual([{ role: 'user', content: 'one\n\ntwo', attachments: [ref('a'), ref('b')], images: [{ mimeType: 'image/png', data: 'A' }] }]);
  });

  it('leaves a well-formed history as it is', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [call('1')] },
      { role: 'tool', content: 'r1', tool_call_id: '1' },
      { role: 'assistant', content: 'done' },
    ];
    const out = sanitizeHistory(history);
    expect(out).toEqual(history);
    // The messages themselves, not copies: this runs over the whole history before every model call.
    for (const [i, m] of out.entries()) expect(m).toBe(history[i]);
  });

  it('an empty list of tool calls is left out, on a new message', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'done', tool_calls: [] },
    ];
    const out = sanitizeHistory(history);
    expect(out).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'done' },
    ]);
    expect(history[1].tool_calls).toEqual([]);
  });

  it('drops a tool result whose call is not right before it, and a second result for one call', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'tool', content: 'orphan', tool_call_id: 'x' },
      { role: 'assistant', content: null, tool_calls: [call('1')] },
      { role: 'tool', content: 'r1', tool_call_id: '1' },
      { role: 'tool', content: 'r1 again', tool_call_id: '1' },
      { role: 'assistant', content: 'done' },
    ];
    expect(sanitizeHistory(history).map((m) => m.content)).toEqual(['hi', null, 'r1', 'done']);
  });

  it('adds a stub result, in call order, for calls that have none', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [call('1'), call('2', 'fetch')] },
      { role: 'tool', content: 'r2', tool_call_id: '2' },
      { role: 'user', content: 'hello?' },
    ];
    const out = sanitizeHistory(history);
    expect(out.map((m) => [m.role, m.tool_call_id ?? null, m.content])).toEqual([
      ['user', null, 'hi'],
      ['assistant', null, null],
      ['tool', '2', 'r2'],
      ['tool', '1', MISSING_RESULT_TEXT],
      ['user', null, 'hello?'],
    ]);
    expect(out[3].tool_name).toBe('lookup');
  });

  it('merges consecutive user messages and consecutive assistant messages, and drops system and empty replies', () => {
    const history: ChatMessage[] = [
      { role: 'system', content: 'old system prompt' },
      { role: 'user', content: 'first' },
      { role: 'user', content: 'second' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: 'a', reasoning: 'r1' },
      { role: 'assistant', content: 'b', reasoning: 'r2', tool_calls: [call('9')] },
    ];
    const out = sanitizeHistory(history);
    expect(out).toEqual([
      { role: 'user', content: 'first\n\nsecond' },
      { role: 'assistant', content: 'a\n\nb', reasoning: 'r1\n\nr2', tool_calls: [call('9')] },
      { role: 'tool', content: MISSING_RESULT_TEXT, tool_call_id: '9', tool_name: 'lookup' },
    ]);
  });

  it('does not change the messages it was given', () => {
    const history: ChatMessage[] = [
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ];
    sanitizeHistory(history);
    expect(history).toEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
  });
});
