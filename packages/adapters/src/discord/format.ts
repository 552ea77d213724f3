/**
 * Markdown → Discord. Discord renders most Markdown natively (bold, italics, strikethrough, code, fences, quotes,
 * lists, `#`–`###` headings, masked links), so the text goes out as written and only the nodes Discord lacks are
 * replaced, at their place in the source:
 *  - pipe tables → an aligned monospace block (Discord shows raw pipes otherwise);
 *  - `####`–`######` headings → bold lines (Discord prints the hashes);
 *  - thematic breaks (`---`, `***`, `___`) and setext underlines → a drawn line (Discord prints them literally);
 *  - images `![alt](url)` → links `[alt](url)` (Discord would show the `!`; it unfurls the link itself).
 * Code (fenced or inline) is a leaf of the tree, so it is never touched.
 */
import type { Heading, Nodes, Table } from 'mdast';
import { isPlainText, parseMarkdown, span, type ParsedMarkdown } from '../shared/markdown/parse.js';
import { DRAWN_RULE } from '../shared/markdown/render.js';
import { layoutTable, tableParts } from '../shared/markdown/table.js';

/** Discord draws `#`, `##` and `###`; deeper headings show their hashes. */
const DISCORD_DEEPEST_HEADING = 3;
const WEB_URL_RE = /^https?:\/\/\S+$/i;

interface Edit {
  start: number;
  end: number;
  text: string;
}

export function formatForDiscord(markdown: string): string {
  if (isPlainText(markdown)) return markdown;
  const md = parseMarkdown(markdown);
  const edits: Edit[] = [];
  const visit = (node: Nodes): void => {
    const found = editsFor(md, node);
    edits.push(...found);
    // A heading's edits are its marks (hashes, underline): its text may still hold images. Other edits replace.
    if ((found.length === 0 || node.type === 'heading') && 'children' in node) node.children.forEach(visit);
  };
  visit(md.root);
  let out = markdown;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

function editsFor(md: ParsedMarkdown, node: Nodes): Edit[] {
  const [start, end] = span(node);
  switch (node.type) {
    case 'thematicBreak':
      return [{ start, end, text: DRAWN_RULE }];
    case 'heading':
      return headingEdits(md, node);
    case 'image':
      // Without alt text a web address stands alone (Discord links it); otherwise the `!` goes and the link stays.
      if (WEB_URL_RE.test(node.url) && !node.alt?.trim()) return [{ start, end, text: node.url }];
      return [{ start, end: start + 1, text: '' }];
    case 'table':
      return [tableEdit(md, node)];
    default:
      return [];
  }
}

function headingEdits(md: ParsedMarkdown, heading: Heading): Edit[] {
  const [start, end] = span(heading);
  const first = heading.children[0];
  const last = heading.children[heading.children.length - 1];
  if (!first || !last) return [];
  const [textStart, textEnd] = [span(first)[0], span(last)[1]];
  // Setext (`Title` over `---` or `===`): Discord shows the text line and prints the underline (after any `> `).
  if (!md.source.startsWith('#', start)) {
    const underline = /[=-]+[ \t]*$/.exec(md.source.slice(textEnd, end));
    return underline ? [{ start: textEnd + underline.index, end, text: DRAWN_RULE }] : [];
  }
  if (heading.depth <= DISCORD_DEEPEST_HEADING) return [];
  // Stars around nothing but stars would draw a rule, not bold text.
  if (!/[^*\s]/.test(md.source.slice(textStart, textEnd))) return [{ start, end, text: md.source.slice(textStart, textEnd) }];
  return [
    { start, end: textStart, text: '**' },
    { start: textEnd, end, text: '**' },
  ];
}

/** The table proper becomes a code block; lines the model meant as text after it stay as written. */
function tableEdit(md: ParsedMarkdown, table: Table): Edit {
  const { rows, end } = tableParts(md, table);
  const start = span(table)[0];
  // Inside a quote or a list item, every line of the block needs the prefix the first one has.
  const lineStart = md.source.lastIndexOf('\n', start - 1) + 1;
  const prefix = md.source.slice(lineStart, start).replace(/[^>\s]/g, ' ');
  const laidOut = layoutTable(rows);
  const fence = fenceFor(laidOut);
  const lines = [fence, ...laidOut, fence];
  return { start, end, text: lines.join(`\n${prefix}`) };
}

/** A fence longer than any run of backticks in the lines, so no cell can close it. */
function fenceFor(lines: readonly string[]): string {
  const longest = Math.max(0, ...lines.flatMap((l) => (l.match(/`+/g) ?? []).map((run) => run.length)));
  return '`'.repeat(Math.max(3, longest + 1));
}
