/**
 * Pairing requests: the people who DMed the bot and got a code. The owner approves one by typing the code the
 * person reads out to them (codes are never shown here: only their holder knows it), or denies it; approved
 * people can be revoked. Every button is a POST form carrying the CSRF token.
 */
import type { ApprovedUser, PendingPairing } from '../../features/pairing/index.js';
import { html, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';
import { tableWrap, when } from './layout.js';

const ACTION = `${CONSOLE_PATH}/pairing`;

function hidden(csrf: string, platform: string, userId: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="platform" value="${platform}"><input type="hidden" name="user_id" value="${userId}">`;
}

function who(p: { userName: string | null; userId: string }): string {
  return p.userName ? `${p.userName} (${p.userId})` : p.userId;
}

export function pairingBody(pending: PendingPairing[], approved: ApprovedUser[], csrf: string): Html {
  const pendingRows = pending.map((p, i) => {
    const id = `code-${i}`;
    return html`<tr>
<th scope="row">${who(p)}</th><td>${p.platform}</td><td>${when(p.createdAt)}</td><td>${when(p.expiresAt)}</td>
<td>
  <form method="post" action="${ACTION}/approve" class="row">
    ${hidden(csrf, p.platform, p.userId)}
    <div class="field"><label for="${id}">Code from ${who(p)}</label><input id="${id}" name="code" required autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="64" inputmode="text"></div>
    <div class="field"><button type="submit">Approve</button></div>
  </form>
  <form method="post" action="${ACTION}/deny">${hidden(csrf, p.platform, p.userId)}<button type="submit" class="secondary" aria-label="Deny ${who(p)}">Deny</button></form>
</td></tr>`;
  });
  const approvedRows = approved.map(
    (a) => html`<tr><th scope="row">${who(a)}</th><td>${a.platform}</td><td>${when(a.approvedAt)}</td>
<td><form method="post" action="${ACTION}/revoke">${hidden(csrf, a.platform, a.userId)}<button type="submit" class="danger" aria-label="Revoke ${who(a)}">Revoke</button></form></td></tr>`,
  );
  return html`
<p>People who are on no allowlist get an 8-character code when they message the bot privately. Ask them for it and type it here to let them in.</p>
<section aria-labelledby="h-pending">
<h2 id="h-pending">Waiting for approval</h2>
${tableWrap('Pending pairing requests, newest first', ['Who', 'Platform', 'Asked', 'Code expires', 'Decision'], pendingRows, 'Nobody is waiting.')}
</section>
<section aria-labelledby="h-approved">
<h2 id="h-approved">Paired</h2>
${tableWrap('Paired people', ['Who', 'Platform', 'Approved', ''], approvedRows, 'Nobody has been paired yet.')}
</section>`;
}
