/**
 * The summary when the summary call fails (rate limit, outage, a model that returns nothing): built from the
 * messages themselves, so compression still frees room and says plainly what it kept — nothing is dropped
 * without a trace.
 */
import type { ChatMessage } from '../base/types.js';
import { withoutSummary } from './summary-text.js';

const MAX_CHARS = 8_000;
const PREVIOUS_SUMMARY_MAX_CHARS = 3_000;
const EXCERPT_MAX_CHARS = 300;
const MAX_FILES = 12;
const EXCERPTS_HEADING = '\n\n## Conversation excerpts\n';
const PATH_MENTION = /(?:~?\/|\.\/)[\w.\-/]+|\b[\w-]+\.(?:ts|js|py|md|json|ya?ml|toml|txt|csv|sh)\b/g;

export function fallbackSummary(turns: readonly ChatMessage[], previousSummary: string | null, reason: string): string {
  const userAsks = turns
    .filter((m) => m.role === 'user')
    .map((m) => withoutSummary(m.content))
    .filter(Boolean);
  const toolCounts = new Map<string, number>();
  for (const m of turns) for (const c of m.tool_calls ?? []) toolCounts.set(c.function.name, (toolCounts.get(c.function.name) ?? 0) + 1);
  const files = new Set<string>();
  for (const m of turns) {
    for (const match of `${m.content ?? ''} ${(m.tool_calls ?? []).map((c) => c.function.arguments).join(' ')}`.matchAll(PATH_MENTION)) {
      if (files.size < MAX_FILES) files.add(match[0]);
    }
  }

  const head = [
    `Note: ${turns.length} earlier messages were compressed, but the summary could not be written (${reason}). ` +
      'Below are excerpts kept from them; ask the user if something important seems to be missing.',
  ];
  if (previousSummary) head.push(`## Earlier summary\n${clip(previousSummary, PREVIOUS_SUMMARY_MAX_CHARS)}`);
  head.push(`## Goal\n${userAsks.length > 0 ? clip(userAsks[userAsks.length - 1], EXCERPT_MAX_CHARS) : 'Unknown.'}`);
  if (toolCounts.size > 0) {
    head.push(`## Tools used\n${[...toolCounts].map(([name, n]) => `- ${name} ×${n}`).join('\n')}`);
  }
  if (files.size > 0) head.push(`## Relevant files\n${[...files].map((f) => `- ${f}`).join('\n')}`);

  // Excerpts last, newest kept first when the cap bites: the latest state matters most to whoever continues.
  let text = head.join('\n\n');
  const excerpts: string[] = [];
  let room = MAX_CHARS - text.length - EXCERPTS_HEADING.length;
  for (let i = turns.length - 1; i >= 0; i--) {
    const line = excerptOf(turns[i]);
    if (line === null) continue;
    room -= line.length + 1;
    if (room < 0) break;
    excerpts.unshift(line);
  }
  if (excerpts.length > 0) text += `${EXCERPTS_HEADING}${excerpts.join('\n')}`;
  return text;
}

function excerptOf(m: ChatMessage): string | null {
  const text = withoutSummary(m.content).replace(/\s+/g, ' ').trim();
  const calls = (m.tool_calls ?? []).map((c) => c.function.name);
  if (m.role === 'tool') return `- tool ${m.tool_name ?? ''} returned: ${clip(text, EXCERPT_MAX_CHARS / 2)}`;
  if (!text && calls.length === 0) return null;
  const callNote = calls.length > 0 ? ` (called ${calls.join(', ')})` : '';
  return `- ${m.role}: ${clip(text, EXCERPT_MAX_CHARS)}${callNote}`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
