/**
 * Markdown → Discord. Discord renders most Markdown natively (bold, italics, strikethrough, code, fences, quotes,
 * lists, `#`–`###` headings, masked links), so the text goes out as written and only the nodes Discord lacks are
 * replaced, at their place in the source:
 *  - pipe tables → an aligned monospace block (Discord shows raw pipes otherwise);
 *  - `####`–`######` headings → bold lines (Discord prints the hashes);
 *  - thematic breaks (`---`, `***`, `___`) and setext underlines → a drawn line (Discord prints them literally);
 *  - images `![alt](url)` → links (Discord would show the `!`; it unfurls the link itself).
 * Code (fenced or inline) is a leaf of the tree, so it is never touched.
 */
import type { Heading, Nodes, Table } from 'mdast';
import { parseMarkdown, span, type ParsedMarkdown } from '../shared/markdown/parse.js';
import { DRAWN_RULE } from '../shared/markdown/render.js';
import { layoutTable, tableParts } from '../shared/markdown/table.js';

/** Discord draws `#`, `##` and `###`; deeper headings show their hashes. */
const DISCORD_DEEPEST_HEADING = 3;

interface Edit {
  start: number;
  end: number;
  text: string;
}

export function formatForDiscord(markdown: string): string {
  const md = parseMarkdown(markdown);
  const edits: Edit[] = [];
  const visit = (node: Nodes): void => {
    const edit = editFor(md, node);
    if (edit) edits.push(edit);
    // A setext heading's edit is only its underline: its text may still hold images.
    if ((!edit || edit.start > span(node)[0]) && 'children' in node) node.children.forEach(visit);
  };
  visit(md.root);
  let out = markdown;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

function editFor(md: ParsedMarkdown, node: Nodes): Edit | null {
  const [start, end] = span(node);
  switch (node.type) {
    case 'thematicBreak':
      return { start, end, text: DRAWN_RULE };
    case 'heading':
      return headingEdit(md, node);
    case 'image': {
      const alt = node.alt?.trim() ?? '';
      return { start, end, text: alt ? `[${alt}](${node.url})` : node.url };
    }
    case 'table':
      return tableEdit(md, node);
    default:
      return null;
  }
}

function headingEdit(md: ParsedMarkdown, heading: Heading): Edit | null {
  const [start, end] = span(heading);
  const first = heading.children[0];
  const last = heading.children[heading.children.length - 1];
  if (!first || !last) return null;
  const text = md.source.slice(span(first)[0], span(last)[1]);
  // Setext (`Title` over `---` or `===`): Discord shows the text line and prints the underline.
  if (!md.source.startsWith('#', start)) return { start: span(last)[1], end, text: `\n${DRAWN_RULE}` };
  return heading.depth > DISCORD_DEEPEST_HEADING ? { start, end, text: `**${text}**` } : null;
}

/** The table proper becomes a code block; lines the model meant as text after it stay as written. */
function tableEdit(md: ParsedMarkdown, table: Table): Edit {
  const { rows } = tableParts(md, table);
  const start = span(table)[0];
  const end = span(rows[rows.length - 1])[1];
  // Inside a quote or a list item, every line of the block needs the prefix the first one has.
  const lineStart = md.source.lastIndexOf('\n', start - 1) + 1;
  const prefix = md.source.slice(lineStart, start).replace(/[^>\s]/g, ' ');
  const lines = ['```', ...layoutTable(rows), '```'];
  return { start, end, text: lines.join(`\n${prefix}`) };
}
