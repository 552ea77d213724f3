/**
 * GFM pipe tables as an aligned monospace block: no chat platform draws Markdown tables, and raw pipes are hard
 * to read. Every platform lays a table out the same way; only the code-block wrapping differs.
 */
import type { Nodes, PhrasingContent, Table, TableRow } from 'mdast';
import { sourceOf, span, type ParsedMarkdown } from './parse.js';

export interface TableParts {
  /** Rows drawn as the table: the header first. */
  rows: TableRow[];
  /** Where the table proper ends in the source (its delimiter row included). */
  end: number;
  /** Rows after the table proper: GFM keeps a line without a pipe in the table, Herald ends the table there. */
  rest: TableRow[];
}

/** Splits off, from the first line without a `|`, what the model meant as text after the table. */
export function tableParts(md: ParsedMarkdown, table: Table): TableParts {
  const end = table.children.findIndex((row, i) => i > 0 && !sourceOf(md, row).includes('|'));
  if (end === -1) return { rows: table.children, end: span(table)[1], rest: [] };
  const rest = table.children.slice(end);
  return { rows: table.children.slice(0, end), end: md.source.lastIndexOf('\n', span(rest[0])[0]), rest };
}

/** The table's lines: cells padded to their column's width, a ruled line under the header. */
export function layoutTable(rows: readonly TableRow[]): string[] {
  const cells = rows.map((row) => row.children.map((cell) => plainText(cell.children)));
  const columns = Math.max(...cells.map((r) => r.length));
  const widths = Array.from({ length: columns }, (_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  const render = (r: string[]): string =>
    widths
      .map((w, c) => (r[c] ?? '').padEnd(w))
      .join(' | ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(Math.max(w, 1))).join('-+-');
  return [render(cells[0]), rule, ...cells.slice(1).map(render)];
}

/** What a reader sees of inline Markdown with every mark dropped; a link or image keeps its address after its text. */
export function plainText(nodes: readonly PhrasingContent[]): string {
  return nodes.map(plainTextOf).join('');
}

function plainTextOf(node: Nodes): string {
  switch (node.type) {
    case 'text':
    case 'inlineCode':
      return node.value;
    case 'break':
      return ' ';
    case 'image':
      return withAddress(node.alt ?? '', node.url);
    case 'link':
      return withAddress(plainText(node.children), node.url);
    default:
      return 'children' in node ? node.children.map(plainTextOf).join('') : '';
  }
}

function withAddress(text: string, url: string): string {
  return text === '' || text === url ? url : `${text} (${url})`;
}
