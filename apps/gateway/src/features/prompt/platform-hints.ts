/**
 * The platform layer: how the chat the session answers in shows what the model writes. The model writes Markdown
 * everywhere; each adapter renders it (Telegram's HTML subset, Slack mrkdwn, Discord Markdown), so these hints say
 * what survives that rendering and what does not.
 */

const HINTS: Readonly<Record<string, string>> = {
  telegram: [
    'You are answering in Telegram. Write Markdown: it is rendered to the HTML subset Telegram shows (bold, italic,',
    'strikethrough, inline code, fenced code blocks, links, block quotes, ||spoilers||). Headings become bold lines and',
    'tables are shown as monospaced text, so prefer short lists. Messages over 4096 characters are split; keep answers',
    'short, as in a chat.',
  ].join(' '),
  slack: [
    'You are answering in Slack. Write Markdown: it is converted to Slack mrkdwn (bold, italic, strikethrough, code,',
    'fenced code blocks, links, quotes, bullet lists). Headings become bold lines; tables are shown as monospaced text.',
    'Keep Slack tokens such as <@U123> or <#C123> exactly as they appear. Answer as in a chat thread.',
  ].join(' '),
  discord: [
    'You are answering in Discord. Discord shows Markdown itself: bold, italic, underline, strikethrough, code, fenced',
    'code blocks with a language, headings, lists, quotes, ||spoilers|| and masked links; no tables. Messages over 2000',
    'characters are split; keep answers short, as in a chat.',
  ].join(' '),
  api: ['You are answering through an API: your text goes to a program or a client as it is. Plain text or Markdown;', 'no platform-specific markup.'].join(
    ' ',
  ),
};

/** The platform's formatting rules; null for a platform with none of its own (a plain text channel). */
export function platformHint(platform: string): string | null {
  return HINTS[platform] ?? null;
}
