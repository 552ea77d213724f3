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

describe('Transcript: the request asked for again', () => {
  const call: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] };

  it('with nothing changed, the same messages in an array of its own', () => {
    const t = new Transcript([{ role: 'user', content: 'earlier' }], { role: 'user', content: 'hello' });
    const first = t.forRequest();
    first.push({ role: 'assistant', content: 'added by a caller' });
    const second = t.forRequest();
    expect(second).not.toBe(first);
    expect(second).toEqual([{ role: 'user', content: 'earlier\n\nhello' }]);
    expect(second[0]).toBe(first[0]);
  });

  it('sees every change made since: messages, scaffold, notes and a replaced context', () => {
    const t = new Transcript([], { role: 'user', content: 'hello' });
    expect(t.forRequest()).toHaveLength(1);
    t.append(call, { role: 'tool', content: 'out', tool_call_id: 'c1' });
    expect(t.forRequest().map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    t.setNotes([]);
    const before = t.forRequest();
    t.setNotes([]);
    expect(t.forRequest()[0]).toBe(before[0]);
    t.setNotes(['budget: 2 calls left']);
    expect(t.forRequest().at(-1)?.content).toBe('out\n\nbudget: 2 calls left');
    t.setNotes(['budget: 1 call left']);
    expect(t.forRequest().at(-1)?.content).toBe('out\n\nbudget: 1 call left');
    t.setNotes(['budget: 2 calls left']);
    t.appendScaffold({ role: 'user', content: 'continue' });
    expect(t.forRequest().at(-1)?.content).toBe('continue');
    t.clearScaffold();
    expect(t.forRequest().at(-1)?.content).toBe('out\n\nbudget: 2 calls left');
    t.replaceContext([{ role: 'user', content: 'summary' }]);
    expect(t.forRequest()).toEqual([{ role: 'user', content: 'summary' }]);
  });
});
