import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import { parseChatCompletion, parseResponsesRequest } from './requests.js';

function refusal(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a 400');
}

describe('reading Chat Completions requests', () => {
  it('splits instructions, alternating history and the new message; text parts and images are read', () => {
    const input = parseChatCompletion(
      {
        model: 'herald',
        stream: true,
        stream_options: { include_usage: true },
        temperature: 0.2,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: 'Use metric units.' },
          { role: 'user', content: 'one' },
          { role: 'user', content: 'two' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c', content: 'result' },
          { role: 'assistant', content: 'reply' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      },
      {},
    );
    expect(input).toMatchObject({
      model: 'herald',
      stream: true,
      includeUsage: true,
      session: null,
      user: null,
      system: 'Be brief.\n\nUse metric units.',
      text: 'look\n[Image: https://example.com/a.png]',
    });
    expect(input.history).toEqual([
      { role: 'user', content: 'one\n\ntwo' },
      { role: 'assistant', content: 'reply' },
    ]);
    expect(input.attachments).toEqual([]);
  });

  it('names the session from X-Herald-Session, else `user`', () => {
    const body = { model: 'herald', user: 'alice', messages: [{ role: 'user', content: 'hi' }] };
    expect(parseChatCompletion(body, { 'x-herald-session': 'work' })).toMatchObject({ session: 'work', user: 'alice' });
    expect(parseChatCompletion(body, {})).toMatchObject({ session: 'alice', user: 'alice' });
  });

  it('refuses what it cannot take with a 400 naming the parameter', () => {
    expect(refusal(() => parseChatCompletion([], {})).message).toContain('JSON object');
    expect(refusal(() => parseChatCompletion({ messages: [{ role: 'user', content: 'x' }] }, {})).param).toBe('model');
    expect(refusal(() => parseChatCompletion({ model: 'herald', messages: [] }, {})).param).toBe('messages');
    expect(refusal(() => parseChatCompletion({ model: 'herald', messages: [{ role: 'user', content: 5 }] }, {})).param).toBe('messages[0].content');
    expect(refusal(() => parseChatCompletion({ model: 'herald', messages: [{ role: 'user', content: '   ' }] }, {})).message).toContain('empty');
    const inline = refusal(() =>
      parseChatCompletion(
        { model: 'herald', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }] },
        {},
      ),
    );
    expect(inline).toMatchObject({ status: 400, code: 'invalid_image_url', param: 'messages[0].content[0].image_url.url' });
    expect(refusal(() => parseChatCompletion({ model: 'herald', messages: [{ role: 'user', content: 'x'.repeat(64_001) }] }, {})).code).toBe(
      'string_above_max_length',
    );
    expect(
      refusal(() => parseChatCompletion({ model: 'herald', messages: [{ role: 'user', content: 'hi' }] }, { 'x-herald-session': 'bad\nname' })).param,
    ).toBe('x-herald-session');
    // `user` is an id (the session's user) even when the header names the session: found by the fuzz suite.
    for (const user of ['\u0000', 'a\u0003b', 'x'.repeat(257)]) {
      expect(
        refusal(() => parseChatCompletion({ model: 'herald', user, messages: [{ role: 'user', content: 'hi' }] }, { 'x-herald-session': 'work' })).param,
      ).toBe('user');
    }
  });
});

describe('reading Responses requests', () => {
  it('takes a string or message items, with instructions', () => {
    expect(parseResponsesRequest({ model: 'herald', input: 'hello', instructions: 'Be kind.' }, {})).toMatchObject({
      text: 'hello',
      system: 'Be kind.',
      history: [],
    });
    const items = parseResponsesRequest(
      {
        model: 'herald',
        input: [
          { role: 'user', content: 'a' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'b' }] },
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'c' },
              { type: 'input_image', image_url: 'https://example.com/x.jpg' },
            ],
          },
        ],
      },
      {},
    );
    expect(items).toMatchObject({
      text: 'c\n[Image: https://example.com/x.jpg]',
      history: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
      ],
      attachments: [],
    });
  });

  it('refuses previous_response_id and item types it does not run', () => {
    expect(refusal(() => parseResponsesRequest({ model: 'herald', input: 'x', previous_response_id: 'resp_1' }, {})).param).toBe('previous_response_id');
    expect(refusal(() => parseResponsesRequest({ model: 'herald', input: [{ type: 'function_call_output', call_id: 'c', output: '1' }] }, {})).param).toBe(
      'input',
    );
  });
});
