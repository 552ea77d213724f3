/**
 * Generated histories for the compression tests: valid chat transcripts (roles alternate, every call has its
 * result) from a seeded PRNG, so a failing case can be replayed.
 */
import type { ChatMessage } from '../base/types.js';

/** mulberry32: small, fast and deterministic. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A transcript of roughly `length` messages: user turns answered by the assistant, some through tool calls
 * (several per message, sometimes chained), some with a steering user message right after the results.
 */
export function generateHistory(seed: number, length: number): ChatMessage[] {
  const rnd = prng(seed);
  const pick = (n: number): number => Math.floor(rnd() * n);
  const text = (label: string): string => `${label} ${'lorem ipsum '.repeat(1 + pick(60))}`.trim();
  const out: ChatMessage[] = [];
  let callNo = 0;
  while (out.length < length) {
    out.push({ role: 'user', content: text(`u${out.length}`) });
    // 0..2 tool rounds before the final answer.
    for (let round = pick(3); round > 0; round--) {
      const calls = Array.from({ length: 1 + pick(3) }, () => ({
        id: `call_${seed}_${callNo++}`,
        type: 'function' as const,
        function: { name: pick(2) ? 'read_file' : 'search', arguments: JSON.stringify({ path: `/src/f${callNo}.ts` }) },
      }));
      out.push({ role: 'assistant', content: pick(2) ? null : text('thinking'), tool_calls: calls });
      for (const c of calls) {
        out.push({ role: 'tool', tool_call_id: c.id, tool_name: c.function.name, content: text(`out ${c.id}`) });
      }
      // A steering message from the user between tool batches.
      if (pick(4) === 0) out.push({ role: 'user', content: text('steer') });
    }
    out.push({ role: 'assistant', content: text(`a${out.length}`) });
  }
  return out;
}

/** Violations of the alternation and pairing rules, as readable strings (empty when the history is valid). */
export function historyViolations(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  const answered = new Set<string>();
  messages.forEach((m, i) => {
    const prev = messages[i - 1];
    if (m.role !== 'tool') {
      for (const id of open) problems.push(`call ${id} has no result before message ${i}`);
      open = new Set();
      if (prev && prev.role === m.role) problems.push(`two ${m.role} messages in a row at ${i - 1}, ${i}`);
      for (const c of m.tool_calls ?? []) open.add(c.id);
      return;
    }
    const id = m.tool_call_id ?? '';
    if (!open.has(id)) problems.push(`tool result ${id} at ${i} has no call before it`);
    if (answered.has(id)) problems.push(`tool result ${id} repeated at ${i}`);
    open.delete(id);
    answered.add(id);
  });
  for (const id of open) problems.push(`call ${id} has no result at the end`);
  return problems;
}
