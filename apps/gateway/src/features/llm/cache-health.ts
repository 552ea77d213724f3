/**
 * Notices when a session's prompt-cache hit rate collapses: a session that was reading most of its prompt from
 * cache suddenly reads none of it (a /model switch, a system prompt that stopped being byte-identical, tools
 * that changed order). Stateless: it compares the session's stored totals before the turn with the turn's usage,
 * so it works whichever worker ran the earlier turns.
 */
import type { Usage } from '@herald/agent-core';

/** Below this many prompt tokens the providers do not cache at all (Anthropic: 1024), so rates mean nothing. */
const MIN_CACHEABLE_TOKENS = 1024;
const WAS_HEALTHY = 0.5;
const NOW_COLLAPSED = 0.1;

export interface CacheTotals {
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** Share of prompt tokens read from cache; undefined when there were too few tokens to tell. */
function cacheHitRate(input: number, cacheRead: number, cacheWrite: number): number | undefined {
  const prompt = input + cacheRead + cacheWrite;
  return prompt < MIN_CACHEABLE_TOKENS ? undefined : cacheRead / prompt;
}

/** Cache reads as a percentage of all prompt tokens, one decimal; null before the first prompt. */
export function cachePercent(input: number, cacheRead: number, cacheWrite: number): number | null {
  const prompt = input + cacheRead + cacheWrite;
  return prompt === 0 ? null : Math.round((cacheRead / prompt) * 1000) / 10;
}

/** The rates before and now when the turn's hit rate fell from healthy to almost nothing; else undefined. */
export function cacheCollapse(before: CacheTotals, turn: Usage): { before: number; now: number } | undefined {
  const was = cacheHitRate(before.inputTokens, before.cacheReadTokens, before.cacheWriteTokens);
  const now = cacheHitRate(turn.input, turn.cacheRead, turn.cacheWrite);
  if (was === undefined || now === undefined) return undefined;
  return was >= WAS_HEALTHY && now < NOW_COLLAPSED ? { before: was, now } : undefined;
}
