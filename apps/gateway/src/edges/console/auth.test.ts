import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { CONSOLE_COOKIE, SESSION_MAX_AGE_MS, crossSite, csrfTokenFor, safeNext, sessionCookieValue, validSession } from './auth.js';
import { html } from './html.js';
import { snippetHtml } from './sessions.js';

const TOKEN = 'console-admin-token-0123456789';
const withHeaders = (headers: Record<string, string>): FastifyRequest => ({ headers }) as unknown as FastifyRequest;

describe('console sessions and CSRF', () => {
  it("accepts its own fresh cookie only: not another token's, not a forged or an expired one", () => {
    const now = Date.now();
    const cookie = sessionCookieValue(TOKEN, now);
    expect(cookie).not.toContain(TOKEN);
    expect(validSession(withHeaders({ cookie: `a=b; ${CONSOLE_COOKIE}=${cookie}` }), TOKEN, now)).toBe(cookie);
    expect(validSession(withHeaders({ cookie: `${CONSOLE_COOKIE}=${cookie}` }), 'another-admin-token-000000', now)).toBeNull();
    expect(validSession(withHeaders({ cookie: `${CONSOLE_COOKIE}=${now}.forged` }), TOKEN, now)).toBeNull();
    expect(validSession(withHeaders({ cookie: `${CONSOLE_COOKIE}=${cookie}` }), TOKEN, now + SESSION_MAX_AGE_MS + 1)).toBeNull();
    expect(validSession(withHeaders({}), TOKEN, now)).toBeNull();
    // The CSRF token belongs to one session.
    expect(csrfTokenFor(TOKEN, cookie)).not.toBe(csrfTokenFor(TOKEN, sessionCookieValue(TOKEN, now + 1)));
  });

  it('tells cross-site posts by Fetch Metadata, else by Origin', () => {
    expect(crossSite(withHeaders({ 'sec-fetch-site': 'same-origin', origin: 'null' }))).toBe(false);
    expect(crossSite(withHeaders({ 'sec-fetch-site': 'cross-site' }))).toBe(true);
    expect(crossSite(withHeaders({ 'sec-fetch-site': 'same-site' }))).toBe(true);
    expect(crossSite(withHeaders({ origin: 'https://evil.example', host: '127.0.0.1:8080' }))).toBe(true);
    expect(crossSite(withHeaders({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080' }))).toBe(false);
    expect(crossSite(withHeaders({ host: '127.0.0.1:8080' }))).toBe(false);
  });

  it('goes back after login only to a console page', () => {
    expect(safeNext('/console/sessions?q=a')).toBe('/console/sessions?q=a');
    for (const bad of ['https://evil.example/', '//evil.example/console', '/admin/sessions', '/console//evil', undefined])
      expect(safeNext(bad)).toBe('/console');
  });
});

describe('console HTML', () => {
  it('escapes every interpolated value; nested templates stay markup', () => {
    const name = '<script>alert("x")</script>';
    expect(html`<p title="${name}">${name}${html`<b>ok</b>`}</p>`.value).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<b>ok</b></p>',
    );
  });

  it('marks search hits without letting the snippet inject markup', () => {
    expect(snippetHtml('a >>>b<<< <img src=x onerror=alert(1)>').value).toBe('a <mark>b</mark> &lt;img src=x onerror=alert(1)&gt;');
  });
});
