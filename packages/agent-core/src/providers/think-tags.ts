/**
 * Reasoning that OpenAI-compatible servers (Ollama, vLLM without a reasoning parser, llama.cpp) leave inside the
 * content as `<think>…</think>` (or `<thinking>`, `<reasoning>`, `<REASONING_SCRATCHPAD>`): split out of the text
 * as it streams, so users never see raw thinking and the history keeps it in `reasoning`. A tag may arrive split
 * across chunks: text that could be the start of a tag is held back until the next chunk (or the end) decides.
 */

const TAG_NAMES = ['think', 'thinking', 'reasoning', 'reasoning_scratchpad'] as const;
const OPEN_TAGS = TAG_NAMES.map((n) => `<${n}>`);
const CLOSE_TAGS = TAG_NAMES.map((n) => `</${n}>`);
const LONGEST_TAG = Math.max(...CLOSE_TAGS.map((t) => t.length));

export interface SplitPiece {
  text: string;
  reasoning: string;
}

export class ThinkTagSplitter {
  private pending = '';
  /** The closing tag that ends the thinking we are inside, or null outside thinking. */
  private closeTag: string | null = null;

  /** The content and reasoning this chunk settles (either may be ''). */
  push(chunk: string): SplitPiece {
    this.pending += chunk;
    return this.drain(false);
  }

  /** Whatever is still held back, at the end of the stream (an unclosed `<think>` stays reasoning). */
  flush(): SplitPiece {
    return this.drain(true);
  }

  private drain(final: boolean): SplitPiece {
    const out: SplitPiece = { text: '', reasoning: '' };
    for (;;) {
      const lower = this.pending.toLowerCase();
      const tags = this.closeTag ? [this.closeTag] : OPEN_TAGS;
      const found = firstTag(lower, tags);
      if (found) {
        const before = this.pending.slice(0, found.index);
        if (this.closeTag) out.reasoning += before;
        else out.text += before;
        this.pending = this.pending.slice(found.index + found.tag.length);
        this.closeTag = this.closeTag ? null : `</${found.tag.slice(1)}`;
        // The newline that follows a closing tag belongs to the tag, not the answer.
        if (!this.closeTag) this.pending = this.pending.replace(/^\s+/, '');
        continue;
      }
      // Keep back a tail that may be the start of a tag; everything before it is settled.
      const keep = final ? 0 : partialTagLength(lower, tags);
      const settled = this.pending.slice(0, this.pending.length - keep);
      this.pending = this.pending.slice(settled.length);
      if (this.closeTag) out.reasoning += settled;
      else out.text += settled;
      return out;
    }
  }
}

/**
 * A whole reply's text with its thinking moved out. Also catches a reply whose template opened the thinking in
 * the prompt, so only `</think>` appears: everything before it was thinking.
 */
export function splitThinkTags(text: string): SplitPiece {
  const closeOnly = firstTag(text.toLowerCase(), CLOSE_TAGS);
  if (closeOnly && !firstTag(text.slice(0, closeOnly.index).toLowerCase(), OPEN_TAGS)) {
    const rest = splitThinkTags(text.slice(closeOnly.index + closeOnly.tag.length).replace(/^\s+/, ''));
    return { text: rest.text, reasoning: join(text.slice(0, closeOnly.index).trim(), rest.reasoning) };
  }
  const splitter = new ThinkTagSplitter();
  const a = splitter.push(text);
  const b = splitter.flush();
  return { text: a.text + b.text, reasoning: a.reasoning + b.reasoning };
}

function join(a: string, b: string): string {
  return a && b ? `${a}\n${b}` : a || b;
}

function firstTag(lower: string, tags: readonly string[]): { index: number; tag: string } | undefined {
  let best: { index: number; tag: string } | undefined;
  for (const tag of tags) {
    const index = lower.indexOf(tag);
    if (index >= 0 && (best === undefined || index < best.index)) best = { index, tag };
  }
  return best;
}

/** How many characters at the end of `lower` could be the beginning of one of `tags`. */
function partialTagLength(lower: string, tags: readonly string[]): number {
  const start = lower.lastIndexOf('<', lower.length - 1);
  if (start < 0 || lower.length - start >= LONGEST_TAG) return 0;
  const tail = lower.slice(start);
  return tags.some((t) => t.startsWith(tail)) ? tail.length : 0;
}
