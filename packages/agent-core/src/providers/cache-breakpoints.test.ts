/**
 * The one breakpoint plan, and every wire format built from it: never more than four breakpoints in a request,
 * whatever the history looks like, and the places are the ones the plan names.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { toAnthropicRequest } from './anthropic-convert.js';
import { toConverseRequest } from './bedrock-convert.js';
import { MAX_CACHE_BREAKPOINTS, breakpointCount, planCacheBreakpoints } from './cache-breakpoints.js';
import { toChatMessages } from './openai.js';
import { latestOwnText, withChatCacheMarkers } from './openai-cache.js';
import { SESSION_HEADING, buildSessionSystemPrompt, splitSystemPrompt } from './system-prompt.js';

const text = fc.string({ minLength: 0, maxLength: 12 });
const callId = fc.stringMatching(/^call_[a-z0-9]{1,6}$/);

/** A history in the internal format, tool calls answered as the loop writes them (and stray system notes). */
const history = fc
  .array(
    fc.oneof(
      fc.record({ role: fc.constant('user' as const), content: text }),
      fc.record({ role: fc.constant('assistant' as const), content: text }),
      fc.record({ role: fc.constant('system' as const), content: text }),
      fc.tuple(callId, text).map(([id, out]): ChatMessage[] => [
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', content: out, tool_call_id: id },
      ]),
    ),
    { maxLength: 30 },
  )
  .map((items) => items.flatMap((m): ChatMessage[] => (Array.isArray(m) ? m : [m as ChatMessage])));

const systemPrompt = fc.oneof(
  fc.constant(''),
  text,
  text.map((t) => `static ${t}${SESSION_HEADING}session ${t}`),
);

function countMarks(value: unknown, key: string): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countMarks(v, key), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce((n, [k, v]) => n + (k === key ? 1 : 0) + countMarks(v, key), 0);
}

describe('cache breakpoints', () => {
  it('the plan: static prefix, end of system, the last two messages', () => {
    expect(planCacheBreakpoints({ systemBlocks: 2, messages: 5 })).toEqual({ system: [0, 1], messages: [3, 4] });
    expect(planCacheBreakpoints({ systemBlocks: 1, messages: 5 })).toEqual({ system: [0], messages: [3, 4] });
    expect(planCacheBreakpoints({ systemBlocks: 0, messages: 1 })).toEqual({ system: [], messages: [0] });
  });

  it('with per-request parts after the latest user text: that text, the last message, the system prompt', () => {
    // The message before the last gives way: the next turn reads through the person's words instead.
    expect(planCacheBreakpoints({ systemBlocks: 2, messages: 5, ownTextOf: 4 })).toEqual({ system: [0, 1], messages: [4], ownTextOf: 4 });
    expect(planCacheBreakpoints({ systemBlocks: 1, messages: 5, ownTextOf: 2 })).toEqual({ system: [0], messages: [3, 4], ownTextOf: 2 });
    expect(planCacheBreakpoints({ systemBlocks: 0, messages: 1, ownTextOf: 0 })).toEqual({ system: [], messages: [0], ownTextOf: 0 });
    expect(planCacheBreakpoints({ systemBlocks: 2, messages: 3, ownTextOf: 7 })).toEqual({ system: [0, 1], messages: [1, 2] });
  });

  it('Anthropic, Bedrock and a router: the notes after the latest question follow its breakpoint; earlier questions carry none', () => {
    const notes = '<memory>\nn\n</memory>';
    const messages: ChatMessage[] = [
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: `q2\n\n${notes}`, requestContextAt: 2 },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', content: 'out', tool_call_id: 'c1' },
    ];
    const { messages: sent } = toAnthropicRequest(`static${SESSION_HEADING}session`, messages);
    expect(sent[2]!.content).toEqual([
      { type: 'text', text: 'q2', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: `\n\n${notes}` },
    ]);
    expect(countMarks(sent.slice(0, 2), 'cache_control')).toBe(0);
    expect(countMarks(sent[3], 'cache_control')).toBe(0);
    expect(countMarks(sent[4], 'cache_control')).toBe(1);
    // Bedrock: the cache point goes between the question and the notes.
    const converse = toConverseRequest(`static${SESSION_HEADING}session`, messages, true).messages;
    expect(converse[2]!.content).toEqual([{ text: 'q2' }, { cachePoint: { type: 'default' } }, { text: `\n\n${notes}` }]);
    expect(countMarks(converse, 'cachePoint')).toBe(2);
    // Claude through a router: the question and the notes become two parts, the first marked.
    const routed = withChatCacheMarkers('S', toChatMessages('S', messages), latestOwnText(messages)) as Array<{ role: string; content: unknown }>;
    expect(routed[3]!.content).toEqual([
      { type: 'text', text: 'q2', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: `\n\n${notes}` },
    ]);
    expect(countMarks(routed, 'cache_control')).toBe(3);
  });

  it('never plans more than four, for any layout', () => {
    fc.assert(
      fc.property(fc.nat(10), fc.nat(200), fc.option(fc.nat(200)), (systemBlocks, messages, own) => {
        const layout = { systemBlocks, messages, ...(own === null ? {} : { ownTextOf: own }) };
        expect(breakpointCount(planCacheBreakpoints(layout))).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
      }),
    );
  });

  it('never sends more than four: Anthropic cache_control, OpenRouter markers, Bedrock cache points', () => {
    fc.assert(
      fc.property(systemPrompt, history, (system, messages) => {
        expect(countMarks(toAnthropicRequest(system, messages), 'cache_control')).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
        expect(countMarks(withChatCacheMarkers(system, toChatMessages(system, messages)), 'cache_control')).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
        expect(countMarks(toConverseRequest(system, messages, true), 'cachePoint')).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
      }),
      { numRuns: 300 },
    );
  });

  it('Claude through a router: a message with images carries its mark on its last text part; an image alone none', () => {
    const image = { mimeType: 'image/png', data: 'iVBORw0KGgo=' };
    const messages: ChatMessage[] = [
      { role: 'user', content: 'what is this?', images: [image] },
      { role: 'assistant', content: 'a chart' },
      { role: 'user', content: '', images: [image] },
    ];
    const out = withChatCacheMarkers('S', toChatMessages('S', messages)) as Array<{ role: string; content: unknown }>;
    expect(out[1]!.content).toEqual([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]); // not among the last two
    expect(out[2]!.content).toEqual([{ type: 'text', text: 'a chart', cache_control: { type: 'ephemeral' } }]);
    expect(countMarks(out[3], 'cache_control')).toBe(0);
    const withText = withChatCacheMarkers('S', toChatMessages('S', messages.slice(0, 1))) as Array<{ role: string; content: unknown }>;
    expect(withText[1]!.content).toEqual([
      { type: 'text', text: 'what is this?', cache_control: { type: 'ephemeral' } },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
  });

  it('the session system prompt splits back into its static prefix and session part, byte for byte', () => {
    const prompt = buildSessionSystemPrompt('You are Herald.', {
      platform: 'telegram',
      chatType: 'dm',
      startedAt: new Date('2025-03-04T23:59:00Z'),
      timeZone: 'UTC',
    });
    expect(prompt).toBe(
      `You are Herald.${SESSION_HEADING}Platform: telegram (dm).\nConversation started on 2025-03-04; use the current_time tool when the exact time matters.`,
    );
    expect(splitSystemPrompt(prompt).join('')).toBe(prompt);
    expect(splitSystemPrompt(prompt)[0]).toBe('You are Herald.');
    // Built twice the same day, it is the same prompt: no clock reading beyond the date.
    const later = buildSessionSystemPrompt('You are Herald.', {
      platform: 'telegram',
      chatType: 'dm',
      startedAt: new Date('2025-03-04T08:00:00Z'),
      timeZone: 'UTC',
    });
    expect(later).toBe(prompt);
  });
});
