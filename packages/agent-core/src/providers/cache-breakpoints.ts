/**
 * Where Anthropic-style `cache_control` breakpoints go, decided in one pure function for every wire format that
 * takes them (Anthropic Messages, Claude through OpenRouter's Chat Completions, Bedrock cachePoint blocks).
 *
 * At most four per request (the API's limit), by priority:
 * 1. the request's last message (each call of a tool loop, and the next turn, read this call's prefix);
 * 2. the end of the latest user message's own text when per-request parts follow it (the saved notes of B7,
 *    the turn's images): the next turn sends that message without them, so only this prefix is still the same
 *    bytes then, and the next turn reads through it instead of from the message before;
 * 3. the end of the system prompt (this session's prefix);
 * 4. the end of the static system prefix (shared by every session, so cached across sessions);
 * 5. the message before the last (a second way in when a tool batch pushes the last one past the 20-block lookback).
 * The system prompt is built once per session and replayed byte-identical (system-prompt.ts), which is what makes
 * these prefixes hit.
 */

export const MAX_CACHE_BREAKPOINTS = 4;

export interface CacheLayout {
  /** Text blocks of the system prompt, in order (the static prefix, then the session part). */
  systemBlocks: number;
  /** Messages (or merged turns) of the request, in order. */
  messages: number;
  /** The message (or merged turn) whose user text is followed by per-request parts, if any. */
  ownTextOf?: number;
}

export interface CachePlan {
  /** Indices of system blocks that end with a breakpoint. */
  system: number[];
  /** Indices of messages whose last block ends with a breakpoint. */
  messages: number[];
  /** The message whose own user text (before its per-request parts) ends with a breakpoint. */
  ownTextOf?: number;
}

export function planCacheBreakpoints(layout: CacheLayout): CachePlan {
  const systemBlocks = Math.max(0, Math.floor(layout.systemBlocks));
  const messages = Math.max(0, Math.floor(layout.messages));
  const own = layout.ownTextOf;
  const hasOwn = own !== undefined && Number.isInteger(own) && own >= 0 && own < messages;
  const candidates: Array<{ system: number } | { message: number } | { own: number }> = [];
  if (messages > 0) candidates.push({ message: messages - 1 });
  if (hasOwn) candidates.push({ own });
  if (systemBlocks > 0) candidates.push({ system: systemBlocks - 1 });
  if (systemBlocks > 1) candidates.push({ system: 0 });
  if (messages > 1) candidates.push({ message: messages - 2 });
  const plan: CachePlan = { system: [], messages: [] };
  for (const c of candidates.slice(0, MAX_CACHE_BREAKPOINTS)) {
    if ('system' in c) plan.system.push(c.system);
    else if ('message' in c) plan.messages.push(c.message);
    else plan.ownTextOf = c.own;
  }
  plan.system.sort((a, b) => a - b);
  plan.messages.sort((a, b) => a - b);
  return plan;
}

/** The number of breakpoints a plan places (never more than MAX_CACHE_BREAKPOINTS). */
export function breakpointCount(plan: CachePlan): number {
  return plan.system.length + plan.messages.length + (plan.ownTextOf === undefined ? 0 : 1);
}
