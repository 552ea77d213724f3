import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../base/types.js';
import { ProviderError } from '../providers/types.js';
import { ScriptedProvider } from '../loop/scripted-provider.js';
import { compressHistory } from './compressor.js';
import { PRUNED_TOOL_OUTPUT } from './prune.js';
import { SUMMARIZER_SYSTEM_PROMPT, summaryBudget } from './summarize.js';
import { SUMMARY_END_MARKER, SUMMARY_PREFIX, extractSummary } from './summary-text.js';
import { generateHistory, historyViolations, prng } from './test-support.js';

const WINDOW = 200_000;

/** A provider whose every call returns `summary` (and records what it was asked). */
const summarizer = (summary = '## Goal\nsummary text') => new ScriptedProvider('summ').otherwise(() => ({ text: summary }));

/** `n` alternating user/assistant messages, `u0`, `a1`, `u2`, ... */
function chat(n: number, pad = 0): ChatMessage[] {
  return Array.from(
    { length: n },
    (_, i): ChatMessage => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `${i % 2 === 0 ? 'u' : 'a'}${i}${' x'.repeat(pad)}`,
    }),
  );
}

const summaries = (messages: ChatMessage[]) => messages.filter((m) => m.content?.includes(SUMMARY_PREFIX));

describe('compressHistory', () => {
  it('keeps the first 3 and the last 20 messages, and replaces the middle by one summary from one tool-less call', async () => {
    const provider = summarizer();
    const history = chat(40, 200);
    const r = await compressHistory(history, { provider, contextWindow: WINDOW, tailBudgetTokens: 0 });
    expect(r.compressed).toBe(true);
    expect(r.messages.slice(0, 3)).toEqual(history.slice(0, 3));
    expect(r.messages.slice(-20)).toEqual(history.slice(-20));
    expect(r.messages).toHaveLength(24);
    expect(r.summarized).toBe(17);
    expect(r.messages[3].role).toBe('assistant'); // between u2 and u20
    expect(r.messages[3].content).toContain(SUMMARY_PREFIX);
    expect(r.messages[3].content).toContain('summary text');
    expect(r.messages[3].content).toContain(SUMMARY_END_MARKER);

    expect(provider.calls).toHaveLength(1);
    const call = provider.calls[0];
    expect(call.tools).toEqual([]);
    expect(call.systemPrompt).toBe(SUMMARIZER_SYSTEM_PROMPT);
    const prompt = call.messages[0].content ?? '';
    for (const section of [
      '## Goal',
      '## Constraints and preferences',
      '### Done',
      '### In progress',
      '### Blocked',
      '## Key decisions',
      '## Relevant files',
      '## Next steps',
      '## Critical context',
    ]) {
      expect(prompt).toContain(section);
    }
    expect(prompt).toContain('[user] u4');
    expect(prompt).toContain('[assistant] a19');
    expect(prompt).not.toContain('u2 '); // the head is not summarised
    expect(prompt).not.toContain('u20 ');
  });

  it('the tail takes more than 20 messages while they fit its budget (20 % of the threshold)', async () => {
    const history = chat(60, 10); // ~ 10 tokens each
    const r = await compressHistory(history, { provider: summarizer(), contextWindow: WINDOW, thresholdTokens: 2_000 });
    // budget 400 tokens: about 30 messages of the tail
    const kept = r.messages.length - 4;
    expect(kept).toBeGreaterThan(20);
    expect(kept).toBeLessThan(57);
    expect(r.messages.slice(-kept)).toEqual(history.slice(-kept));
  });

  it('does nothing when there is no middle: 23 messages or fewer, or a tail budget that covers everything', async () => {
    const provider = summarizer();
    const short = await compressHistory(chat(23, 50), { provider, contextWindow: WINDOW, tailBudgetTokens: 0 });
    expect(short.compressed).toBe(false);
    expect(short.messages).toEqual(chat(23, 50));
    const roomy = await compressHistory(chat(40), { provider, contextWindow: WINDOW });
    expect(roomy.compressed).toBe(false);
    expect(provider.calls).toHaveLength(0);
  });

  it('updates the previous summary instead of rewriting it, and keeps a single summary', async () => {
    const provider = new ScriptedProvider('summ').script({ text: 'FIRST: user wants a parser' }, { text: 'SECOND: parser done, tests next' });
    const once = await compressHistory(chat(40, 100), { provider, contextWindow: WINDOW, tailBudgetTokens: 0 });
    const grown = [...once.messages, ...chat(20, 100).map((m) => ({ ...m, content: `later ${m.content}` }))];
    const twice = await compressHistory(grown, { provider, contextWindow: WINDOW, tailBudgetTokens: 0 });
    const prompt = provider.calls[1].messages[0].content ?? '';
    expect(prompt).toContain('<previous_summary>\nFIRST: user wants a parser\n</previous_summary>');
    expect(prompt).toContain('You are updating the summary');
    expect(prompt).not.toContain(SUMMARY_PREFIX); // the old summary is passed as such, not as a turn
    expect(summaries(twice.messages)).toHaveLength(1);
    expect(extractSummary(summaries(twice.messages)[0].content)).toBe('SECOND: parser done, tests next');
    expect(historyViolations(twice.messages)).toEqual([]);
  });

  it('when the summary call fails, a deterministic summary keeps excerpts and says what happened', async () => {
    const provider = new ScriptedProvider('summ').otherwise(() => ({ error: new ProviderError('rate_limit', 'slow down', { status: 429 }) }));
    const history = chat(40, 5);
    history[10] = { role: 'user', content: 'please edit /src/app/main.ts to add logging' };
    const r = await compressHistory(history, { provider, contextWindow: WINDOW, tailBudgetTokens: 0 });
    expect(r.compressed).toBe(true);
    expect(r.summaryError).toBe('slow down');
    const body = extractSummary(summaries(r.messages)[0].content) ?? '';
    expect(body).toContain('17 earlier messages were compressed');
    expect(body).toContain('slow down');
    expect(body).toContain('/src/app/main.ts');
    expect(body).toContain('- user: u18');
    expect(body).toContain('- assistant: a19');
  });

  it('an aborted summary call aborts the compression (the turn was interrupted)', async () => {
    const controller = new AbortController();
    controller.abort();
    const r = compressHistory(chat(40, 50), { provider: summarizer(), contextWindow: WINDOW, tailBudgetTokens: 0, signal: controller.signal });
    await expect(r).rejects.toMatchObject({ kind: 'aborted' });
  });

  it('replaces old tool outputs over 200 characters by a placeholder, keeps short ones and the tail verbatim', async () => {
    const long = 'L'.repeat(201);
    const history: ChatMessage[] = [
      { role: 'user', content: 'look at two files' },
      { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] },
      { role: 'tool', tool_call_id: 'c1', content: long },
      { role: 'tool', tool_call_id: 'c2', content: 'S'.repeat(200) },
      ...chat(30, 20).slice(1),
      { role: 'user', content: 'again' },
      { role: 'assistant', content: null, tool_calls: [call('c3')] },
      { role: 'tool', tool_call_id: 'c3', content: long },
      { role: 'assistant', content: 'done' },
    ];
    const r = await compressHistory(history, { provider: summarizer(), contextWindow: WINDOW, tailBudgetTokens: 0 });
    expect(r.messages.slice(0, 4).map((m) => m.content)).toEqual(['look at two files', null, PRUNED_TOOL_OUTPUT, 'S'.repeat(200)]);
    expect(r.prunedToolOutputs).toBe(1);
    expect(r.messages.at(-2)?.content).toBe(long);
  });

  it('property: for every head/tail role combination, roles alternate and every tool result keeps its call', async () => {
    const seen = new Set<string>();
    let compressed = 0;
    const rnd = prng(7);
    for (let seed = 1; seed <= 300; seed++) {
      const history = generateHistory(seed, 25 + Math.floor(rnd() * 50));
      expect(historyViolations(history)).toEqual([]);
      const headMessages = 2 + (seed % 3);
      const minTailMessages = 1 + Math.floor(rnd() * 24);
      const r = await compressHistory(history, { provider: summarizer(), contextWindow: WINDOW, headMessages, minTailMessages, tailBudgetTokens: 0 });
      if (!r.compressed) continue;
      compressed++;
      expect(historyViolations(r.messages), `seed ${seed}`).toEqual([]);
      expect(summaries(r.messages), `seed ${seed}`).toHaveLength(1);
      const { head, tail } = r.kept;
      expect(tail).toBeGreaterThanOrEqual(minTailMessages);
      // The head keeps its messages (an old tool output may be shortened); the tail is verbatim, its first
      // message possibly carrying the summary in front of its own text.
      expect(r.messages.slice(0, head).map((m) => m.role)).toEqual(history.slice(0, head).map((m) => m.role));
      const merged = r.messages.length === head + tail;
      const keptTail = r.messages.slice(-tail);
      expect(keptTail.slice(1)).toEqual(history.slice(-tail).slice(1));
      const firstTail = history[history.length - tail];
      if (merged) expect(keptTail[0].content).toContain(firstTail.content ?? '');
      else expect(keptTail[0]).toEqual(firstTail);
      seen.add(`${history[head - 1].role}→${firstTail.role}`);
    }
    expect(compressed).toBeGreaterThan(250);
    expect([...seen].sort()).toEqual(['assistant→assistant', 'assistant→user', 'tool→assistant', 'tool→user', 'user→assistant', 'user→user']);
  });
});

describe('summaryBudget', () => {
  it('is 20 % of the compressed part, clamped to [2,000, min(5 % of the window, 12,000)]', () => {
    expect(summaryBudget(1_000, 200_000)).toBe(2_000);
    expect(summaryBudget(30_000, 200_000)).toBe(6_000);
    expect(summaryBudget(100_000, 200_000)).toBe(10_000);
    expect(summaryBudget(500_000, 1_000_000)).toBe(12_000);
    // A window too small for the floor: the ceiling wins, the summary must not crowd out the conversation.
    expect(summaryBudget(10_000, 8_000)).toBe(400);
  });
});

function call(id: string) {
  return { id, type: 'function' as const, function: { name: 'read_file', arguments: '{"path":"/a"}' } };
}
