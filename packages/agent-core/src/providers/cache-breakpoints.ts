/**
 * Where Anthropic-style `cache_control` breakpoints go, decided in one pure function for every wire format that
 * takes them (Anthropic Messages, Claude through OpenRouter's Chat Completions, Bedrock cachePoint blocks).
 *
 * At most four per request (the API's limit): the end of the static system prefix (shared by every session, so
 * cached across sessions), the end of the system prompt (this session's prefix), and the last two messages (each
 * call of a tool loop then reads the previous call's prefix from cache). The system prompt is built once per
 * session and replayed byte-identical (system-prompt.ts), which is what makes these prefixes hit.
 */

export const MAX_CACHE_BREAKPOINTS = 4;
/** Breakpoints spent on the newest messages. */
const MESSAGE_CACHE_BREAKPOINTS = 2;

export interface CacheLayout {
  /** Text blocks of the system prompt, in order (the static prefix, then the session part). */
  systemBlocks: number;
  /** Messages (or merged turns) of the request, in order. */
  messages: number;
}

export interface CachePlan {
  /** Indices of system blocks that end with a breakpoint. */
  system: number[];
  /** Indices of messages whose last block ends with a breakpoint. */
  messages: number[];
}

export function planCacheBreakpoints(layout: CacheLayout): CachePlan {
  const systemBlocks = Math.max(0, Math.floor(layout.systemBlocks));
  const messages = Math.max(0, Math.floor(layout.messages));
  // The static prefix and the end of the system prompt: the first block and the last (the same when only one).
  const system = systemBlocks === 0 ? [] : [...new Set([0, systemBlocks - 1])].slice(0, 2);
  const room = Math.min(MESSAGE_CACHE_BREAKPOINTS, MAX_CACHE_BREAKPOINTS - system.length, messages);
  const tail: number[] = [];
  for (let i = messages - room; i < messages; i++) tail.push(i);
  return { system, messages: tail };
}

/** The number of breakpoints a plan places (never more than MAX_CACHE_BREAKPOINTS). */
export function breakpointCount(plan: CachePlan): number {
  return plan.system.length + plan.messages.length;
}
