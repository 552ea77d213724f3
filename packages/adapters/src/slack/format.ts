/**
 * Markdown (what the model writes) → Slack mrkdwn, rendered from the parsed tree.
 *
 * **bold** → *bold*, *italic* / _italic_ → _italic_, ~~strike~~ → ~strike~, [t](u) → <u|t>, headings → bold lines,
 * list markers → •, & < > escaped everywhere except inside Slack's own <…> tokens (mentions, links). Code spans
 * and fenced blocks keep their content (escaped, since Slack decodes entities there too) and lose the fence's
 * language tag, which Slack would otherwise print as the first line of the block.
 */
import type { Link, PhrasingContent } from 'mdast';
import { isPlainText, parseMarkdown, sourceOf, span } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup, type Rendering } from '../shared/markdown/render.js';
import { plainText } from '../shared/markdown/table.js';

/** Slack's own tokens, which the model may copy from the conversation: <@U…>, <#C…|name>, <!here>, <https://…|label>. */
const SLACK_TOKEN_RE = /<(?:[@#!][^<>\s|]+|(?:https?|mailto|tel):[^<>\s|]+)(?:\|[^<>\n]*)?>/g;

const WORD_CHAR_RE = /[\p{L}\p{N}]/u;

export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function markdownToMrkdwn(markdown: string): string {
  if (isPlainText(markdown)) return escapeMrkdwn(markdown);
  return renderMarkdown(parseMarkdown(markdown), SLACK_MRKDWN);
}

const SLACK_MRKDWN: PlatformMarkup = {
  inline: inlineMrkdwn,
  heading: (inner) => `*${inner}*`,
  codeBlock: (node) => fenced(escapeMrkdwn(node.value)),
  // Slack has one quote level, marked at the start of every line (so not in a list item, where it is text).
  quote: (inner, inList) =>
    inList
      ? inner
      : inner
          .split('\n')
          .map((line) => `> ${line}`)
          .join('\n'),
  monospace: (text) => fenced(escapeMrkdwn(text)),
  literal: escapeMrkdwn,
};

function fenced(code: string): string {
  return code === '' ? '```\n```' : `\`\`\`\n${code}\n\`\`\``;
}

function inlineMrkdwn(nodes: readonly PhrasingContent[], r: Rendering, bold: boolean): string {
  return nodes.map((node) => inlineNode(node, r, bold)).join('');
}

function inlineNode(node: PhrasingContent, r: Rendering, bold: boolean): string {
  const inner = (): string => ('children' in node ? inlineMrkdwn(node.children, r, bold) : '');
  // Slack draws no emphasis inside a word (`2*3*4`, `un**real**ly`): show it as written.
  if ((node.type === 'emphasis' || node.type === 'strong' || node.type === 'delete') && insideWord(r, node)) {
    return escapeText(sourceOf(r.md, node));
  }
  switch (node.type) {
    case 'text': {
      // Slack has no escapes: `\*` shown as `*` could pair with another star, so escaped text stays as written.
      const written = sourceOf(r.md, node);
      return escapeText(written.includes('\\') ? written : node.value);
    }
    case 'strong':
      return bold ? inner() : `*${inlineMrkdwn(node.children, r, true)}*`;
    case 'emphasis': {
      // `***x***` parses as emphasis around strong; Slack reads `*_x_*`, not `_*x*_`.
      const [only] = node.children;
      if (!bold && node.children.length === 1 && only.type === 'strong') return `*_${inlineMrkdwn(only.children, r, true)}_*`;
      return `_${inner()}_`;
    }
    case 'delete':
      return `~${inner()}~`;
    case 'inlineCode':
      return `\`${escapeMrkdwn(node.value)}\``;
    case 'break':
      return '\n';
    case 'link':
      return sourceOf(r.md, node).startsWith('<') ? autolink(node) : slackLink(node.url, plainText(node.children));
    case 'linkReference':
      return slackLink(r.definitions.get(node.identifier)?.url ?? '', plainText(node.children));
    case 'image':
      return slackLink(node.url, node.alt ?? '');
    case 'imageReference':
      return slackLink(r.definitions.get(node.identifier)?.url ?? '', node.alt ?? '');
    default:
      return escapeMrkdwn(sourceOf(r.md, node));
  }
}

function insideWord(r: Rendering, node: PhrasingContent): boolean {
  const [start, end] = span(node);
  return WORD_CHAR_RE.test(r.md.source.charAt(start - 1)) || WORD_CHAR_RE.test(r.md.source.charAt(end));
}

/** Text with & < > escaped, Slack tokens kept as they are. */
function escapeText(text: string): string {
  let out = '';
  let last = 0;
  for (const m of text.matchAll(SLACK_TOKEN_RE)) {
    out += escapeMrkdwn(text.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  return out + escapeMrkdwn(text.slice(last));
}

/** `<https://x|label>` is already Slack's syntax (and an autolink to CommonMark); `<a@b.c>` is an e-mail link. */
function autolink(node: Link): string {
  const bar = node.url.indexOf('|');
  if (bar === -1) return slackLink(node.url, plainText(node.children).replace(/^mailto:/, ''));
  return `<${safeUrl(node.url.slice(0, bar))}|${escapeMrkdwn(node.url.slice(bar + 1))}>`;
}

function slackLink(url: string, label: string): string {
  const text = label.trim();
  if (text === '' || text === url) return `<${safeUrl(url)}>`;
  return `<${safeUrl(url)}|${escapeMrkdwn(text).replace(/\|/g, '¦')}>`;
}

function safeUrl(url: string): string {
  return url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
}
