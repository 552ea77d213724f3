/**
 * The one Markdown parser every platform renderer starts from: CommonMark (micromark, via mdast) with GFM tables
 * and `~~strikethrough~~`, and with the constructs that would change what a chat user sees switched off:
 *  - raw HTML (`<div>`, `<y>`): a chat shows the model's angle brackets as text, it never interprets them;
 *  - character references (`&amp;`): shown as written, as every platform did before the parser;
 *  - indented code: a model indents prose and list continuations far more often than it means a code block.
 * Every node keeps its source position, so a renderer can fall back to the text as written.
 */
import type { Nodes, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { gfmStrikethroughFromMarkdown } from 'mdast-util-gfm-strikethrough';
import { gfmTableFromMarkdown } from 'mdast-util-gfm-table';
import { gfmStrikethrough } from 'micromark-extension-gfm-strikethrough';
import { gfmTable } from 'micromark-extension-gfm-table';

const DISABLED_CONSTRUCTS = ['htmlFlow', 'htmlText', 'characterReference', 'codeIndented'];

/** A parsed message: the tree and the text it was parsed from (renderers read positions against it). */
export interface ParsedMarkdown {
  root: Root;
  source: string;
}

/** Made once: the extensions are plain data, and building them per message is a measurable part of a parse. */
const OPTIONS = {
  extensions: [gfmTable(), gfmStrikethrough({ singleTilde: false }), { disable: { null: DISABLED_CONSTRUCTS } }],
  mdastExtensions: [gfmTableFromMarkdown(), gfmStrikethroughFromMarkdown()],
};

/**
 * Characters that can begin Markdown syntax anywhere in a line, and line starts and ends the parser would read
 * (indentation, a heading, quote or list marker, a hard break's trailing spaces).
 */
const SYNTAX_RE = /[\\`*_~|[\]<\r\0]|^[ \t]|^[#>+=-]|^\d{1,9}[.)]|[ \t]$/m;

/**
 * True when the text holds no Markdown at all, so every renderer shows it exactly as written (escaped): the common
 * short answer then skips the parser, which costs a few hundred microseconds even for one sentence.
 */
export function isPlainText(text: string): boolean {
  return !SYNTAX_RE.test(text);
}

export function parseMarkdown(source: string): ParsedMarkdown {
  return { root: fromMarkdown(source, OPTIONS), source };
}

/** Start and end offsets of a node in its source (every parsed node has them). */
export function span(node: Nodes): [number, number] {
  return [node.position?.start.offset ?? 0, node.position?.end.offset ?? 0];
}

/** The node as the model wrote it. */
export function sourceOf(md: ParsedMarkdown, node: Nodes): string {
  const [start, end] = span(node);
  return md.source.slice(start, end);
}

/** Newlines between two sibling blocks as written (at least one), so blank lines survive rendering. */
export function gapBetween(md: ParsedMarkdown, before: Nodes, after: Nodes): string {
  const between = md.source.slice(span(before)[1], span(after)[0]);
  return '\n'.repeat(Math.max(1, between.split('\n').length - 1));
}
