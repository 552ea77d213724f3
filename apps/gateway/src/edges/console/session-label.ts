/**
 * How the console names a session so that two of the same minute read differently (issue 47): its title, else
 * (API) the name the client gave it, else the start of its first user message; who it is with (display name, else
 * the platform user id); when it was last active. The id — a UUIDv7, whose first characters are a timestamp — is
 * only secondary text.
 */
import type { SessionOverview } from '@herald/agent-core';
import { html, type Html } from './html.js';

/** Characters of the first user message shown as a session's name. */
const PREVIEW_LENGTH = 60;
/** A stateless API request's session is named `once.<request id>` (edges/api/turns.ts): it has no name of its own. */
const STATELESS_API_CHAT = 'once.';
/** What an API key stands for when the request named no `user` (edges/api/keys.ts keyLabel). */
const KEY_LABEL = /^key-[0-9a-f]{10}$/;

type Labelled = Pick<SessionOverview, 'id' | 'source' | 'title' | 'chatId' | 'firstUserText'>;
type WithUser = Pick<SessionOverview, 'source' | 'userId' | 'userName' | 'key'>;

/** `01a24a05…9f3c`: the prefix to search by and the random tail that tells same-minute ids apart. */
export function shortId(id: string): string {
  return id.length <= 14 ? id : `${id.slice(0, 8)}…${id.slice(-4)}`;
}

/** Text on one line, cut at a word boundary near `max` characters, with an ellipsis when cut. */
export function preview(text: string, max = PREVIEW_LENGTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const cut = flat.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The API session's name as the client gave it (X-Herald-Session or `user`); null for stateless requests and other sources. */
export function apiSessionName(s: Pick<SessionOverview, 'source' | 'chatId'>): string | null {
  return s.source === 'api' && s.chatId !== null && !s.chatId.startsWith(STATELESS_API_CHAT) ? s.chatId : null;
}

/** The session's name in lists and headings. */
export function sessionLabel(s: Labelled): string {
  if (s.title) return s.title;
  const name = apiSessionName(s);
  if (name !== null) return name;
  if (s.firstUserText) return `“${preview(s.firstUserText)}”`;
  return s.source === 'api' ? 'One-off API request' : `Session ${shortId(s.id)}`;
}

/** The key label of an API session (`agent:<profile>:api:dm:<key label>:<name>`), else null. */
function apiKeyOf(s: Pick<SessionOverview, 'source' | 'key'>): string | null {
  return s.source === 'api' ? (s.key.split(':')[4] ?? null) : null;
}

/** Who the session is with: the display name with the platform id beside it, or the id alone; API: the caller's `user` and its key. */
export function userHtml(s: WithUser): Html {
  const key = apiKeyOf(s);
  if (key !== null) {
    const user = s.userId !== null && !KEY_LABEL.test(s.userId) ? s.userId : null;
    return html`${user ?? html`<span class="muted">no user given</span>`} <span class="muted">via API key ${key}</span>`;
  }
  if (s.userName && s.userName !== s.userId) return html`${s.userName} <span class="muted">${s.userId ?? ''}</span>`;
  return html`${s.userId ?? '—'}`;
}

/** `5 min ago`, `3 h ago`, `2 days ago`, as a <time> with the exact UTC time in its title. */
export function ago(ms: number, now: number = Date.now()): Html {
  const d = new Date(ms);
  const exact = `${d.toISOString().replace('T', ' ').slice(0, 16)} UTC`;
  return html`<time datetime="${d.toISOString()}" title="${exact}">${relative(now - ms)}</time>`;
}

function relative(elapsedMs: number): string {
  const s = Math.max(0, Math.round(elapsedMs / 1000));
  if (s < 60) return 'just now';
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} days ago`;
}
