/**
 * The event contents egress sends, built in one place: messages (HTML + plain body), their thread and reply
 * relations, edits (`m.new_content` + `m.replace`), reactions, files, and buttons as numbered options.
 */
import type { Button, OutboundFile } from '../types.js';
import { escapeHtml, markdownToMatrixHtml } from './format.js';

type Content = Record<string, unknown>;

/** Where a message goes in its room: a thread (its root), and the event it answers. */
export interface Placement {
  threadRoot?: string;
  replyTo?: string;
}

/** Where Herald keeps a message's buttons, so a numbered reply to it can be read back as a press. */
export const BUTTONS_FIELD = 'org.herald.buttons';

export function textContent(markdown: string, plain: boolean): Content {
  return plain
    ? { msgtype: 'm.text', body: markdown }
    : { msgtype: 'm.text', body: markdown, format: 'org.matrix.custom.html', formatted_body: markdownToMatrixHtml(markdown) };
}

/**
 * In a thread: `m.thread` with the reply as its in-thread reply (or the thread's fallback reply to the root for
 * clients without threads). Outside one: a plain reply.
 */
export function placed(content: Content, where: Placement): Content {
  if (where.threadRoot) {
    const inReplyTo = { event_id: where.replyTo ?? where.threadRoot };
    return { ...content, 'm.relates_to': { rel_type: 'm.thread', event_id: where.threadRoot, is_falling_back: !where.replyTo, 'm.in_reply_to': inReplyTo } };
  }
  return where.replyTo ? { ...content, 'm.relates_to': { 'm.in_reply_to': { event_id: where.replyTo } } } : content;
}

/** An edit: clients show `m.new_content`; the outer body (`* …`) is for clients without edits. */
export function editContent(eventId: string, markdown: string): Content {
  const fresh = textContent(markdown, false);
  return {
    msgtype: 'm.text',
    body: `* ${markdown}`,
    format: 'org.matrix.custom.html',
    formatted_body: `* ${String(fresh.formatted_body)}`,
    'm.new_content': fresh,
    'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
  };
}

export function reactionContent(eventId: string, emoji: string): Content {
  return { 'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key: emoji } };
}

/**
 * Matrix has no buttons: the choices become a numbered list under the text, and the message keeps their data so
 * the ingress reads a reply of just a number as that button's press (typing the choice's text works as well).
 */
export function withButtons(content: Content, buttons: readonly Button[]): Content {
  const lines = buttons.map((b, i) => `${i + 1}. ${b.label}`);
  const hint = 'Reply with a number to choose.';
  const body = `${String(content.body)}\n\n${lines.join('\n')}\n${hint}`;
  const html = content.formatted_body === undefined ? escapeHtml(String(content.body)).replace(/\n/g, '<br>') : String(content.formatted_body);
  const list = `<ol>${buttons.map((b) => `<li>${escapeHtml(b.label)}</li>`).join('')}</ol>`;
  return {
    ...content,
    body,
    format: 'org.matrix.custom.html',
    formatted_body: `${html}${list}<em>${hint}</em>`,
    [BUTTONS_FIELD]: buttons.map((b) => ({ label: b.label, data: b.data })),
  };
}

const MSGTYPES = { image: 'm.image', voice: 'm.audio', audio: 'm.audio', file: 'm.file' } as const;

/** A file message for an uploaded `mxc://` URI; the caption, when there is one, is the body (spec v1.10 captions). */
export function fileContent(file: OutboundFile, mxc: string, caption: string | undefined): Content {
  const msgtype = file.kind === 'file' && file.mimeType.startsWith('video/') ? 'm.video' : MSGTYPES[file.kind];
  const info: Content = { mimetype: file.mimeType, size: file.data.length };
  if (file.durationSec !== undefined) info.duration = Math.round(file.durationSec * 1000);
  return {
    msgtype,
    body: caption ?? file.name,
    filename: file.name,
    url: mxc,
    info,
    ...(file.kind === 'voice' && { 'org.matrix.msc3245.voice': {}, 'org.matrix.msc1767.audio': { duration: info.duration ?? 0 } }),
  };
}
