/**
 * For end-to-end tests: an LLM stand-in responder that answers `re: <text>` to each user text, optionally after
 * a delay, and checks that no two requests for one conversation are ever in flight at once.
 * Conversations are told apart by a tag at the start of the user text (`s3 m5` → session `s3`).
 */
import type { RecordedRequest, Step } from '../fakes/llm/index.js';

export interface TaggedResponder {
  respond: (req: RecordedRequest) => Promise<Step>;
  /** Requests seen per session tag, in order (the last user text of each). */
  seen: Map<string, string[]>;
  /** Times a second request arrived for a session while one was still being answered. */
  overlaps: number;
  maxInFlight: number;
}

export function lastUserText(req: RecordedRequest): string {
  const messages = (req.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) {
      const texts = (m.content as Array<{ type: string; text?: string }>).filter((b) => b.type === 'text').map((b) => b.text ?? '');
      if (texts.length) return texts.join('\n');
    }
  }
  return '';
}

/** How many answers the model gave so far in this turn (assistant messages after the last user message): 0 first. */
export function turnStep(req: RecordedRequest): number {
  const messages = (req.body.messages ?? []) as Array<{ role: string }>;
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
}

export function taggedResponder(opts: { delayMs?: number | ((text: string) => number) } = {}): TaggedResponder {
  const active = new Map<string, number>();
  let inFlight = 0;
  const r: TaggedResponder = {
    seen: new Map(),
    overlaps: 0,
    maxInFlight: 0,
    respond: async (req) => {
      const text = lastUserText(req);
      const tag = text.split(/\s+/)[0] ?? '';
      const n = (active.get(tag) ?? 0) + 1;
      active.set(tag, n);
      if (n > 1) r.overlaps++;
      inFlight++;
      r.maxInFlight = Math.max(r.maxInFlight, inFlight);
      r.seen.set(tag, [...(r.seen.get(tag) ?? []), text]);
      const delay = typeof opts.delayMs === 'function' ? opts.delayMs(text) : (opts.delayMs ?? 0);
      try {
        if (delay > 0) await new Promise((res) => setTimeout(res, delay));
      } finally {
        inFlight--;
        active.set(tag, (active.get(tag) ?? 1) - 1);
      }
      return { text: `re: ${text}` };
    },
  };
  return r;
}

/** A memory flush (before /new or a compression): the only tool offered is `memory`. */
export function offersOnlyMemory(req: RecordedRequest): boolean {
  const tools = (req.body.tools ?? []) as Array<{ function?: { name?: string } }>;
  return tools.length === 1 && tools[0].function?.name === 'memory';
}
