/** The user message a turn puts to the model, composed from the mailbox entries it answers. */
import type { ChatMessage } from '@herald/agent-core';
import type { MailboxEntry, TurnPayload } from '../queue/mailbox.js';

const QUOTE_MAX_CHARS = 500;

/**
 * The user message of a turn: merged texts, with reply-to context when the quoted message is not in history, and
 * after each text what its files became (`mediaBlocks[i]` for entry i: image notes, transcripts, document text).
 * The parts of a text the client split are one text again, joined by a line break (where the client cut it).
 */
export function composeUserMessage(entries: MailboxEntry[], history: ChatMessage[], mediaBlocks: readonly string[][] = []): string {
  // Most turns: one message without files, whose text (and quote) is the whole of it; no sets and lists to join.
  if (entries.length === 1 && !mediaBlocks[0]?.length) return withQuote(entries[0].payload, history);
  // Messages merged from several people (a shared thread) keep who said what.
  const speakers = new Set(entries.map((e) => e.payload.userId));
  let out = '';
  entries.forEach((e, i) => {
    const text = [withQuote(e.payload, history), ...(mediaBlocks[i] ?? [])].filter(Boolean).join('\n');
    if (i > 0 && continuesText(entries[i - 1].payload, e.payload)) out += `\n${text}`;
    else out += `${i > 0 ? '\n\n' : ''}${speakers.size > 1 ? `[${e.payload.userName ?? e.payload.userId}]: ` : ''}${text}`;
  });
  return out;
}

/** `next` is the next part of the split text `prev` is a part of. */
function continuesText(prev: TurnPayload, next: TurnPayload): boolean {
  return next.partOf?.kind === 'text' && prev.partOf?.kind === 'text' && prev.partOf.id === next.partOf.id && prev.userId === next.userId;
}

function withQuote(p: TurnPayload, history: ChatMessage[]): string {
  if (!p.quoted?.text) return p.text;
  const quoted = p.quoted.text.trim();
  const known = history.some((m) => typeof m.content === 'string' && m.content.includes(quoted));
  if (known) return p.text;
  const short = quoted.length > QUOTE_MAX_CHARS ? `${quoted.slice(0, QUOTE_MAX_CHARS)}…` : quoted;
  return `[Replying to: "${short}"]\n${p.text}`;
}
