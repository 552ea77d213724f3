/**
 * The page shell every console page shares: landmarks (banner, navigation, main), a skip link, the viewport for
 * phones, the stylesheet and the one small script (live queue depth), all served by the console itself.
 */
import { html, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';

export const ASSET_PATH = `${CONSOLE_PATH}/assets`;

type Section = 'overview' | 'sessions' | 'pairing' | 'approvals' | 'usage' | 'skills' | 'login' | 'not-found';

const NAV: Array<{ section: Section; label: string; href: string }> = [
  { section: 'overview', label: 'Overview', href: CONSOLE_PATH },
  { section: 'sessions', label: 'Sessions', href: `${CONSOLE_PATH}/sessions` },
  { section: 'pairing', label: 'Pairing', href: `${CONSOLE_PATH}/pairing` },
  { section: 'approvals', label: 'Approvals', href: `${CONSOLE_PATH}/approvals` },
  { section: 'usage', label: 'Usage', href: `${CONSOLE_PATH}/usage` },
  { section: 'skills', label: 'Skills', href: `${CONSOLE_PATH}/skills` },
];

export interface PageOptions {
  title: string;
  section: Section;
  body: Html;
  /** The session's CSRF token (for the logout form); absent on the login page. */
  csrf?: string;
  /** A one-line outcome of the last action, announced to screen readers. */
  notice?: { kind: 'ok' | 'error'; text: string } | null;
}

export function page(opts: PageOptions): string {
  const nav = opts.csrf
    ? html`<nav aria-label="Console">
        <ul>
          ${NAV.map((n) => html`<li><a href="${n.href}"${n.section === opts.section ? html` aria-current="page"` : ''}>${n.label}</a></li>`)}
        </ul>
        <form method="post" action="${CONSOLE_PATH}/logout" class="logout">
          <input type="hidden" name="_csrf" value="${opts.csrf}">
          <button type="submit">Log out</button>
        </form>
      </nav>`
    : '';
  const notice = opts.notice
    ? html`<p class="notice ${opts.notice.kind}" role="${opts.notice.kind === 'error' ? 'alert' : 'status'}">${opts.notice.text}</p>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · Herald console</title>
<link rel="stylesheet" href="${ASSET_PATH}/console.css">
<script src="${ASSET_PATH}/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <p class="brand"><a href="${CONSOLE_PATH}">Herald</a> <span>console</span></p>
  ${nav}
</header>
<main id="main" tabindex="-1">
<h1>${opts.title}</h1>
${notice}
${opts.body}
</main>
</body>
</html>
`.value;
}

/** A table that scrolls sideways on a narrow screen instead of widening the page. */
export function tableWrap(caption: string, head: string[], rows: Html[], empty: string): Html {
  if (rows.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
<table>
<caption>${caption}</caption>
<thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
<tbody>${rows}</tbody>
</table>
</div>`;
}

export function when(ms: number | string | null): Html {
  if (ms === null) return html`—`;
  const d = new Date(ms);
  return html`<time datetime="${d.toISOString()}">${d.toISOString().replace('T', ' ').slice(0, 16)} UTC</time>`;
}

export const usd = (n: number): string => `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;
export const count = (n: number): string => n.toLocaleString('en-US');
