/**
 * The system prompt of a session: the configured (static) prompt, then a session section fixed when the session
 * starts. It is built once, stored on the session row and replayed byte-identical on every call: nothing that
 * changes per turn (the current minute, a counter) may go in, or every call misses the prompt cache. The
 * current time is a tool (current_time), not part of the prompt.
 *
 * Providers split it back at SESSION_HEADING into the static prefix (cached across all sessions) and the session
 * part (cached within the session), each ending in its own cache breakpoint (cache-breakpoints.ts).
 */

import { localDate } from '../base/time-zones.js';

export const SESSION_HEADING = '\n\n# This conversation\n';

export interface SessionPromptContext {
  /** telegram, discord, slack, cli, api. */
  platform: string;
  /** dm, group, thread, channel. */
  chatType?: string;
  /** When the session started; only its date is written (a minute would change nothing but the cache key). */
  startedAt: Date;
  /** IANA zone the date is given in. */
  timeZone?: string;
}

export function buildSessionSystemPrompt(staticPrompt: string, ctx: SessionPromptContext): string {
  const date = localDate(ctx.startedAt, ctx.timeZone ?? 'UTC');
  const where = ctx.chatType ? `${ctx.platform} (${ctx.chatType})` : ctx.platform;
  const lines = [`Platform: ${where}.`, `Conversation started on ${date}; use the current_time tool when the exact time matters.`];
  return `${staticPrompt.trimEnd()}${SESSION_HEADING}${lines.join('\n')}`;
}

/** [static prefix, session part] when the prompt has a session section, else [prompt]; '' gives []. */
export function splitSystemPrompt(prompt: string): string[] {
  if (prompt.trim() === '') return [];
  const at = prompt.lastIndexOf(SESSION_HEADING);
  if (at <= 0) return [prompt];
  return [prompt.slice(0, at), prompt.slice(at)];
}
