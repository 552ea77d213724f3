/** The login form: the admin token, once; the answer sets the console cookie (auth.ts). */
import { html, type Html } from './html.js';
import { LOGIN_PATH } from './auth.js';

export function loginBody(next: string, failed: boolean): Html {
  return html`<form method="post" action="${LOGIN_PATH}" class="login">
  <input type="hidden" name="next" value="${next}">
  <div class="field">
    <label for="token">Admin token</label>
    <input id="token" name="token" type="password" autocomplete="current-password" required autofocus
      aria-describedby="token-help"${failed ? html` aria-invalid="true"` : ''}>
    <small id="token-help" class="muted">The value of HERALD_ADMIN_TOKEN.</small>
  </div>
  <button type="submit">Log in</button>
</form>`;
}
