/**
 * `||hidden||` → a spoiler node. Telegram's own mark, which no Markdown grammar knows, so it is found after
 * parsing: pairs of `||` among one parent's inline children (so across emphasis and links, never inside code
 * spans or blocks). Like emphasis, an opening `||` is followed by a non-space and a closing one follows one.
 */
import type { Nodes, Parent, PhrasingContent, Text } from 'mdast';
import { sourceOf, type ParsedMarkdown } from '../shared/markdown/parse.js';

interface Spoiler extends Parent {
  type: 'spoiler';
  children: PhrasingContent[];
}

declare module 'mdast' {
  interface PhrasingContentMap {
    spoiler: Spoiler;
  }
  interface RootContentMap {
    spoiler: Spoiler;
  }
}

const MARK = '||';
type Piece = PhrasingContent | typeof MARK;

export function markSpoilers(md: ParsedMarkdown): void {
  const visit = (node: Nodes): void => {
    if (!('children' in node) || node.type === 'table') return;
    node.children.forEach(visit);
    if (node.type === 'paragraph' || node.type === 'heading' || isInline(node)) {
      node.children = pairMarks(splitMarks(md, node.children));
    }
  };
  visit(md.root);
}

function isInline(node: Nodes): node is Extract<PhrasingContent, Parent> {
  return ['emphasis', 'strong', 'delete', 'link', 'linkReference'].includes(node.type);
}

function splitMarks(md: ParsedMarkdown, children: readonly PhrasingContent[]): Piece[] {
  const pieces: Piece[] = [];
  for (const child of children) {
    // `\|\|` is an escaped pipe pair, not a mark; such a text node is left whole.
    if (child.type !== 'text' || !child.value.includes(MARK) || sourceOf(md, child).includes('\\|')) {
      pieces.push(child);
      continue;
    }
    child.value.split(MARK).forEach((part, i) => {
      if (i > 0) pieces.push(MARK);
      if (part !== '') pieces.push(text(part));
    });
  }
  return pieces;
}

function pairMarks(pieces: readonly Piece[]): PhrasingContent[] {
  const out: PhrasingContent[] = [];
  let open: PhrasingContent[] | null = null;
  pieces.forEach((piece, i) => {
    if (piece !== MARK) (open ?? out).push(piece);
    else if (open === null) {
      if (opens(pieces[i + 1])) open = [];
      else out.push(text(MARK));
    } else if (open.length > 0 && closes(open[open.length - 1])) {
      out.push({ type: 'spoiler', children: open });
      open = null;
    } else {
      open.push(text(MARK));
    }
  });
  if (open !== null) out.push(text(MARK), ...(open as PhrasingContent[]));
  return out;
}

const opens = (next: Piece | undefined): boolean => next !== undefined && next !== MARK && !(next.type === 'text' && /^\s/.test(next.value));
const closes = (last: PhrasingContent): boolean => !(last.type === 'text' && /\s$/.test(last.value));
const text = (value: string): Text => ({ type: 'text', value });
