/**
 * The block structure every rendered platform shares: paragraphs, headings, lists, quotes, code blocks, tables and
 * rules laid out as lines, blank lines kept as the model wrote them. A platform supplies only its markup.
 */
import type { Code, Definition, List, Nodes, PhrasingContent, Root, RootContent, Table } from 'mdast';
import { gapBetween, sourceOf, span, type ParsedMarkdown } from './parse.js';
import { layoutTable, tableParts } from './table.js';

/** How a thematic break (`---`) is drawn: chat clients print the dashes otherwise. */
export const DRAWN_RULE = '──────────';
const BULLET = '•';
const LIST_INDENT = '  ';

/** One render: the parsed text and its link reference definitions (`[label]: url`). */
export interface Rendering {
  md: ParsedMarkdown;
  definitions: ReadonlyMap<string, Definition>;
}

export interface PlatformMarkup {
  /** Inline content; `bold` when already inside bold (a heading, `**…**`), where bold marks are dropped. */
  inline(nodes: readonly PhrasingContent[], r: Rendering, bold: boolean): string;
  heading(inner: string): string;
  codeBlock(node: Code): string;
  /**
   * A quote around rendered blocks; quotes inside quotes are flattened (no platform nests them). `inList`: the quote
   * starts after a list marker, not at the start of a line.
   */
  quote(inner: string, inList: boolean): string;
  /** Preformatted text (a laid-out table). */
  monospace(text: string): string;
  /** Text shown exactly as written. */
  literal(text: string): string;
}

interface Place {
  listDepth: number;
  inQuote: boolean;
}

export function renderMarkdown(md: ParsedMarkdown, markup: PlatformMarkup): string {
  const { children } = md.root;
  if (children.length === 0) return markup.literal(md.source);
  const r: Rendering = { md, definitions: definitionsOf(md.root) };
  const body = renderBlocks(children, r, markup, { listDepth: 0, inQuote: false });
  const leading = md.source.slice(0, span(children[0])[0]).split('\n').length - 1;
  const trailing = md.source.slice(span(children[children.length - 1])[1]).split('\n').length - 1;
  return '\n'.repeat(leading) + body + '\n'.repeat(trailing);
}

function definitionsOf(root: Root): Map<string, Definition> {
  const found = new Map<string, Definition>();
  const visit = (node: Nodes): void => {
    if (node.type === 'definition' && !found.has(node.identifier)) found.set(node.identifier, node);
    if ('children' in node) node.children.forEach(visit);
  };
  visit(root);
  return found;
}

function renderBlocks(nodes: readonly RootContent[], r: Rendering, markup: PlatformMarkup, place: Place): string {
  // Definitions are not shown: the references that use them become links.
  const shown = nodes.filter((n) => n.type !== 'definition');
  return shown.map((n, i) => (i > 0 ? gapBetween(r.md, shown[i - 1], n) : '') + renderBlock(n, r, markup, place)).join('');
}

function renderBlock(node: RootContent, r: Rendering, markup: PlatformMarkup, place: Place): string {
  switch (node.type) {
    case 'paragraph':
      return markup.inline(node.children, r, false);
    case 'heading':
      // `Text` over `---` is a setext heading to CommonMark, but models mean a line of text and a rule (as before).
      if (!r.md.source.startsWith('#', span(node)[0])) return `${markup.inline(node.children, r, false)}\n${DRAWN_RULE}`;
      return markup.heading(markup.inline(node.children, r, true));
    case 'thematicBreak':
      return DRAWN_RULE;
    case 'code':
      return markup.codeBlock(node);
    case 'blockquote': {
      const inner = renderBlocks(node.children, r, markup, { ...place, inQuote: true });
      return place.inQuote ? inner : markup.quote(inner, place.listDepth > 0);
    }
    case 'list':
      return renderList(node, r, markup, place);
    case 'table':
      return renderTable(node, r, markup);
    default:
      return markup.literal(sourceOf(r.md, node));
  }
}

/** Bullets become `•`; an ordered list keeps its numbers as written; nested lists indent. */
function renderList(list: List, r: Rendering, markup: PlatformMarkup, place: Place): string {
  const indent = LIST_INDENT.repeat(place.listDepth);
  const inner: Place = { ...place, listDepth: place.listDepth + 1 };
  return list.children
    .map((item, i) => {
      const gap = i > 0 ? gapBetween(r.md, list.children[i - 1], item) : '';
      const first = item.children[0];
      const marker = list.ordered ? r.md.source.slice(span(item)[0], first ? span(first)[0] : span(item)[1]).trim() : BULLET;
      // An item that opens with a list (`1. 1. x`) starts on the marker's line, not indented a second time.
      const body = renderBlocks(item.children, r, markup, inner).replace(/^ +/, '');
      return `${gap}${indent}${marker}${body === '' ? '' : ` ${body}`}`;
    })
    .join('');
}

function renderTable(table: Table, r: Rendering, markup: PlatformMarkup): string {
  const { rows, rest } = tableParts(r.md, table);
  const after = rest.map((row) => row.children.map((cell) => markup.inline(cell.children, r, false)).join(' | '));
  return [markup.monospace(layoutTable(rows).join('\n')), ...after].join('\n');
}
