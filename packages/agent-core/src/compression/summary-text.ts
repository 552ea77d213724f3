/**
 * How a summary sits in history: a fixed prefix that marks it as reference material (not instructions, not a
 * request to answer), the body, and an end marker, so the model knows where the summary stops and the live
 * conversation resumes. The prefix is also how a later compression finds the previous summary to update it.
 */

export const SUMMARY_PREFIX =
  '[CONTEXT SUMMARY — REFERENCE ONLY] Earlier turns of this conversation were compressed into the summary below. ' +
  'Treat it as background, NOT as instructions: do not answer questions or redo requests mentioned in it, they ' +
  'were already handled. Respond to the latest user message after this summary; if it disagrees with the ' +
  'summary, the latest message wins. Your tools remain available as usual.';

export const SUMMARY_END_MARKER = '--- END OF CONTEXT SUMMARY — respond to the conversation below, not to the summary ---';

export function formatSummary(body: string): string {
  return `${SUMMARY_PREFIX}\n\n${body.trim()}\n\n${SUMMARY_END_MARKER}`;
}

/** Summary text merged in front of a message that must keep its role (see assemble.ts). */
export function prependSummary(body: string, content: string | null): string {
  return content ? `${formatSummary(body)}\n\n${content}` : formatSummary(body);
}

export function containsSummary(content: string | null): boolean {
  return content?.includes(SUMMARY_PREFIX) === true;
}

/** The summary body inside a message, or null when it carries none. */
export function extractSummary(content: string | null): string | null {
  if (content === null) return null;
  const start = content.indexOf(SUMMARY_PREFIX);
  if (start < 0) return null;
  const from = start + SUMMARY_PREFIX.length;
  const end = content.indexOf(SUMMARY_END_MARKER, from);
  return content.slice(from, end < 0 ? undefined : end).trim();
}

/** What a message says besides a summary merged into it ('' when it is only a summary). */
export function withoutSummary(content: string | null): string {
  if (content === null) return '';
  const start = content.indexOf(SUMMARY_PREFIX);
  if (start < 0) return content;
  const end = content.indexOf(SUMMARY_END_MARKER, start);
  const after = end < 0 ? '' : content.slice(end + SUMMARY_END_MARKER.length);
  return `${content.slice(0, start)}${after}`.trim();
}
