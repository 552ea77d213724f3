/**
 * Markdown (what the model writes) → Slack mrkdwn, rendered from the parsed tree.
 *
 * **bold** → *bold*, *italic* / _italic_ → _italic_, ~~strike~~ → ~strike~, [t](u) → <u|t>, headings → bold lines,
 * list markers → •, & < > escaped everywhere except inside Slack's own <…> tokens (mentions, links). Code spans
 * and fenced blocks keep their content (escaped, since Slack decodes entities there too) and lose the fence's
 * language tag, which Slack would otherwise print as the first line of the block.
 */
import { isPlainText, parseMarkdown } from '../shared/markdown/parse.js';
import { renderMarkdown, type PlatformMarkup } from '../shared/markdown/render.js';
import { fencedBlock, lineQuote, starInline } from '../shared/markdown/star-inline.js';

/** Slack's own tokens, which the model may copy from the conversation: <@U…>, <#C…|name>, <!here>, <https://…|label>. */
const SLACK_TOKEN_RE = /<(?:[@#!][^<>\s|]+|(?:https?|mailto|tel):[^<>\s|]+)(?:\|[^<>\n]*)?>/g;

export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function markdownToMrkdwn(markdown: string): string {
  if (isPlainText(markdown)) return escapeMrkdwn(markdown);
  return renderMarkdown(parseMarkdown(markdown), SLACK_MRKDWN);
}

const SLACK_MRKDWN: PlatformMarkup = {
  inline: starInline({
    bold: '*',
    italic: '_',
    strike: '~',
    // Slack has no escapes: `\*` shown as `*` could pair with another star, so escaped text stays as written.
    text: (written, value) => escapeText(written.includes('\\') ? written : value),
    asWritten: escapeText,
    other: escapeMrkdwn,
    code: escapeMrkdwn,
    link: (url, label, isAutolink) => (isAutolink ? autolink(url, label) : slackLink(url, label)),
  }),
  heading: (inner) => `*${inner}*`,
  codeBlock: (node) => fencedBlock(escapeMrkdwn(node.value)),
  // Slack has one quote level, marked at the start of every line (so not in a list item, where it is text).
  quote: lineQuote,
  monospace: (text) => fencedBlock(escapeMrkdwn(text)),
  literal: escapeMrkdwn,
};

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
function autolink(url: string, label: string): string {
  const bar = url.indexOf('|');
  if (bar === -1) return slackLink(url, label.replace(/^mailto:/, ''));
  return `<${safeUrl(url.slice(0, bar))}|${escapeMrkdwn(url.slice(bar + 1))}>`;
}

function slackLink(url: string, label: string): string {
  const text = label.trim();
  if (text === '' || text === url) return `<${safeUrl(url)}>`;
  return `<${safeUrl(url)}|${escapeMrkdwn(text).replace(/\|/g, '¦')}>`;
}

function safeUrl(url: string): string {
  return url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
}
