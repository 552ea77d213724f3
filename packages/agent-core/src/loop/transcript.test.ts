/**
 * The request context (the saved notes, B7) rides on the latest user message of each request only: never in what
 * the session stores, even when a compression inside the turn hands the sent messages back as the new context.
 */
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { Transcript } from './transcript.js';

const NOTES = '<memory>\nThe team deploys on Tuesdays.\n</memory>';

describe('Transcript: the request context', () => {
  it("follows the latest user message's own text and says where it begins", () => {
    const t = new Transcript(
      [
        { role: 'user', content: 'earlier' },
        { role: 'assistant', content: 'yes' },
      ],
      { role: 'user', content: 'hello' },
      NOTES,
    );
    const sent = t.forRequest();
    expect(sent[0]).toEqual({ role: 'user', content: 'earlier' });
    expect(sent[2]).toEqual({ role: 'user', content: `hello\n\n${NOTES}`, requestContextAt: 5 });
    expect(t.newMessages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('an image-only message gets the notes alone, from position 0', () => {
    const t = new Transcript([], { role: 'user', content: '' }, NOTES);
    expect(t.forRequest()[0]).toEqual({ role: 'user', content: NOTES, requestContextAt: 0 });
  });

  it('a compression that returns the sent messages does not store the notes nor send them twice', () => {
    const t = new Transcript([], { role: 'user', content: 'hello' }, NOTES);
    const call: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    t.append(call, { role: 'tool', content: 'out', tool_call_id: 'c1' });
    // A compressor keeps the recent messages verbatim: here, all of what was sent.
    t.replaceContext(t.forRequest());
    expect(t.compactedHistory?.[0]).toEqual({ role: 'user', content: 'hello' });
    const sent = t.forRequest();
    expect(sent[0]).toEqual({ role: 'user', content: `hello\n\n${NOTES}`, requestContextAt: 5 });
    expect(JSON.stringify(sent).split('Tuesdays')).toHaveLength(2);
  });
});
