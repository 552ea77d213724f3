/** The console's 404 page: an HTML page with the way back, not the server's JSON error. */
import { html, type Html } from './html.js';
import { CONSOLE_PATH } from './auth.js';

export function notFoundBody(what: string): Html {
  return html`<p>${what}</p>
<p><a href="${CONSOLE_PATH}">Overview</a> · <a href="${CONSOLE_PATH}/sessions">Sessions</a></p>`;
}
