/**
 * Markdown (what the model writes) → Slack mrkdwn.
 *
 * **bold** → *bold*, *italic* / _italic_ → _italic_, ~~strike~~ → ~strike~, [t](u) → <u|t>, headings → bold lines,
 * list markers → •, & < > escaped everywhere except inside Slack's own <…> tokens (mentions, links). Code spans
 * and fenced blocks keep their content (escaped, since Slack decodes entities there too) and lose the fence's
 * language tag, which Slack would otherwise print as the first line of the block.
 */

const FENCE_RE = /^(\s*)(```+|~~~+)\s*([\w+#.-]*)\s*$/;
/** Private-use markers: never produced by a model, never escaped, swapped back at the end. */
const HOLE = '\u{F0000}';
const BOLD = '\u{F0001}';
const HOLE_RE = new RegExp(`${HOLE}(\\d+)${HOLE}`, 'gu');

const CODE_SPAN_RE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;
const LINK_RE = /!?\[([^\]\n]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"\n]*")?\s*\)/g;
/** Slack's own tokens: <@U…>, <#C…>, <!here>, <https://…|label>, <mailto:…> — and Markdown autolinks. */
const SLACK_TOKEN_RE = /<(?:[@#!][^<>\s|]+|(?:https?|mailto|tel):[^<>\s|]+)(?:\|[^<>\n]*)?>/g;
const HEADING_RE = /^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/;
const LIST_RE = /^(\s*)[-*+]\s+(?=\S)/;
const QUOTE_RE = /^(\s*)(?:>\s?)+/; // Slack has one quote level
const RULE_RE = /^\s{0,3}([-*_])(?:\s*\1){2,}\s*$/;

const BOLD_ITALIC_RE = /(\*\*\*|___)(?=\S)([^\n]*?\S)\1/g;
const BOLD_RE = /(\*\*|__)(?=\S)([^\n]*?\S)\1/g;
const ITALIC_STAR_RE = /(^|[^\w*])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?![\w*])/g;
const STRIKE_RE = /~~(?=\S)([^\n]*?\S)~~/g;

export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function markdownToMrkdwn(markdown: string): string {
  const out: string[] = [];
  let prose: string[] = [];
  let fence: string | null = null;
  const flushProse = (): void => {
    if (prose.length > 0) out.push(convertProse(prose.join('\n')));
    prose = [];
  };
  for (const line of markdown.split('\n')) {
    const m = FENCE_RE.exec(line);
    if (fence === null) {
      if (m) {
        flushProse();
        fence = m[2];
        out.push('```');
      } else {
        prose.push(line);
      }
      continue;
    }
    if (m && m[3] === '' && m[2][0] === fence[0] && m[2].length >= fence.length) {
      fence = null;
      out.push('```');
    } else {
      out.push(escapeMrkdwn(line));
    }
  }
  flushProse();
  if (fence !== null) out.push('```'); // an unclosed fence would swallow the rest of the message in Slack
  return out.join('\n');
}

/** Text outside fenced blocks. */
function convertProse(text: string): string {
  const holes: string[] = [];
  const hole = (value: string): string => `${HOLE}${holes.push(value) - 1}${HOLE}`;

  let s = text.replace(CODE_SPAN_RE, (_all, ticks: string, body: string) => hole(`\`${escapeMrkdwn(ticks.length > 1 ? body.trim() : body)}\``));
  s = s.replace(LINK_RE, (_all, label: string, url: string) => hole(slackLink(url, label)));
  s = s.replace(SLACK_TOKEN_RE, (token) => hole(token));

  s = s
    .split('\n')
    .map((line) => {
      if (RULE_RE.test(line)) return '──────────';
      const heading = HEADING_RE.exec(line);
      if (heading) return `${BOLD}${heading[1].replace(/\*\*|__/g, '')}${BOLD}`;
      const quote = QUOTE_RE.exec(line);
      if (quote) return `${quote[1]}${hole('>')} ${convertListMarker(line.slice(quote[0].length))}`;
      return convertListMarker(line);
    })
    .join('\n');

  s = escapeMrkdwn(s);
  s = s.replace(BOLD_ITALIC_RE, (_all, _marker: string, body: string) => `${BOLD}_${body}_${BOLD}`);
  s = s.replace(BOLD_RE, (_all, _marker: string, body: string) => `${BOLD}${body}${BOLD}`);
  s = s.replace(ITALIC_STAR_RE, (_all, before: string, body: string) => `${before}_${body}_`);
  s = s.replace(STRIKE_RE, (_all, body: string) => `~${body}~`);
  s = s.replaceAll(BOLD, '*');
  // Holes can nest (a code span inside a link label); restore until none are left.
  while (s.includes(HOLE)) s = s.replace(HOLE_RE, (_all, i: string) => holes[Number(i)]);
  return s;
}

function convertListMarker(line: string): string {
  return line.replace(LIST_RE, '$1• ');
}

function slackLink(url: string, label: string): string {
  const safeUrl = url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
  const text = label.trim();
  if (text === '' || text === url) return `<${safeUrl}>`;
  return `<${safeUrl}|${escapeMrkdwn(text).replace(/\|/g, '¦')}>`;
}
