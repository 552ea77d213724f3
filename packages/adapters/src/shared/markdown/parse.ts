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

export function parseMarkdown(source: string): ParsedMarkdown {
  const root = fromMarkdown(source, {
    extensions: [gfmTable(), gfmStrikethrough({ singleTilde: false }), { disable: { null: DISABLED_CONSTRUCTS } }],
    mdastExtensions: [gfmTableFromMarkdown(), gfmStrikethroughFromMarkdown()],
  });
  return { root, source };
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
