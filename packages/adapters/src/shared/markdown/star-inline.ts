/**
 * Inline Markdown → the star-style chat markup Slack (mrkdwn) and WhatsApp share: `*bold*`, `_italic_`, `~strike~`,
 * `` `code` ``. The walk is the same for both; a platform supplies its marks and how it escapes text and draws
 * links. Neither platform draws emphasis inside a word (`2*3*4`, `un**real**ly`), so that is shown as written.
 */
import type { PhrasingContent } from 'mdast';
import { sourceOf, span } from './parse.js';
import type { Rendering } from './render.js';
import { plainText } from './table.js';

export interface StarMarkup {
  bold: string;
  italic: string;
  strike: string;
  /** A text node: `written` as in the source (escapes included), `value` what it means. */
  text(written: string, value: string): string;
  /** Emphasis inside a word, shown as the model wrote it. */
  asWritten(source: string): string;
  /** A node the platform has no markup for, shown as written. */
  other(source: string): string;
  /** The content of a code span. */
  code(value: string): string;
  /** `autolink`: written as `<url>` (a link already in Slack's own syntax, for one). */
  link(url: string, label: string, autolink: boolean): string;
}

const WORD_CHAR_RE = /[\p{L}\p{N}]/u;

/** A PlatformMarkup `inline` for the given marks. */
export function starInline(m: StarMarkup): (nodes: readonly PhrasingContent[], r: Rendering, bold: boolean) => string {
  const inline = (nodes: readonly PhrasingContent[], r: Rendering, bold: boolean): string => nodes.map((node) => inlineNode(node, r, bold)).join('');

  const inlineNode = (node: PhrasingContent, r: Rendering, bold: boolean): string => {
    const inner = (): string => ('children' in node ? inline(node.children, r, bold) : '');
    if ((node.type === 'emphasis' || node.type === 'strong' || node.type === 'delete') && insideWord(r, node)) return m.asWritten(sourceOf(r.md, node));
    switch (node.type) {
      case 'text':
        return m.text(sourceOf(r.md, node), node.value);
      case 'strong':
        return bold ? inner() : `${m.bold}${inline(node.children, r, true)}${m.bold}`;
      case 'emphasis': {
        // `***x***` parses as emphasis around strong; both platforms read `*_x_*`, not `_*x*_`.
        const [only] = node.children;
        if (!bold && node.children.length === 1 && only.type === 'strong') return `${m.bold}${m.italic}${inline(only.children, r, true)}${m.italic}${m.bold}`;
        return `${m.italic}${inner()}${m.italic}`;
      }
      case 'delete':
        return `${m.strike}${inner()}${m.strike}`;
      case 'inlineCode':
        return `\`${m.code(node.value)}\``;
      case 'break':
        return '\n';
      case 'link':
        return m.link(node.url, plainText(node.children), sourceOf(r.md, node).startsWith('<'));
      case 'linkReference':
        return m.link(r.definitions.get(node.identifier)?.url ?? '', plainText(node.children), false);
      case 'image':
        return m.link(node.url, node.alt ?? '', false);
      case 'imageReference':
        return m.link(r.definitions.get(node.identifier)?.url ?? '', node.alt ?? '', false);
      default:
        return m.other(sourceOf(r.md, node));
    }
  };
  return inline;
}

function insideWord(r: Rendering, node: PhrasingContent): boolean {
  const [start, end] = span(node);
  return WORD_CHAR_RE.test(r.md.source.charAt(start - 1)) || WORD_CHAR_RE.test(r.md.source.charAt(end));
}

/** On lines of their own, so the shared chunker closes and reopens a block it has to split. */
export function fencedBlock(code: string): string {
  return code === '' ? '```\n```' : `\`\`\`\n${code}\n\`\`\``;
}

/** One quote level, marked at the start of every line (in a list item, after the marker, it is just text). */
export function lineQuote(inner: string, inList: boolean): string {
  return inList
    ? inner
    : inner
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
}
