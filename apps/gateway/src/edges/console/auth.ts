/**
 * Who may use the console: whoever typed the admin token (HERALD_ADMIN_TOKEN) into its login form.
 *
 *   - The login sets `herald_console=<issued-at>.<HMAC of it keyed by the token>`: HttpOnly (no script reads it),
 *     SameSite=Strict (no other site's page sends it), Path=/console, Secure over https, valid for 12 hours. The
 *     token itself never leaves the login request; changing HERALD_ADMIN_TOKEN logs everyone out.
 *   - Every state-changing request is a POST that must carry the session's CSRF token (an HMAC of the cookie, in a
 *     hidden form field), and a POST whose Origin or Sec-Fetch-Site says it comes from another site is refused
 *     before that — three locks, each enough alone.
 *   - Pages are sent with a strict Content-Security-Policy (own scripts and styles only, no framing).
 */
import { createHmac } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCookie, sameToken } from '../admin/auth.js';

export const CONSOLE_PATH = '/console';
export const CONSOLE_COOKIE = 'herald_console';
export const LOGIN_PATH = `${CONSOLE_PATH}/login`;
/** A console login lasts a working day. */
export const SESSION_MAX_AGE_MS = 12 * 3600_000;

export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
  'x-frame-options': 'DENY',
};

function mac(token: string, what: string): string {
  return createHmac('sha256', token).update(what).digest('base64url');
}

export function sessionCookieValue(token: string, issuedAt = Date.now()): string {
  return `${issuedAt}.${mac(token, `console session ${issuedAt}`)}`;
}

export function csrfTokenFor(token: string, cookie: string): string {
  return mac(token, `console csrf ${cookie}`);
}

/** The request's console session cookie when it is genuine and fresh, else null. */
export function validSession(req: FastifyRequest, token: string, now = Date.now()): string | null {
  const cookie = readCookie(req.headers.cookie, CONSOLE_COOKIE);
  if (!cookie) return null;
  const m = /^(\d{1,15})\.[\w-]+$/.exec(cookie);
  if (!m) return null;
  const issuedAt = Number(m[1]);
  if (issuedAt > now + 60_000 || now - issuedAt > SESSION_MAX_AGE_MS) return null;
  return sameToken(cookie, sessionCookieValue(token, issuedAt)) ? cookie : null;
}

export function setSessionCookie(reply: FastifyReply, req: FastifyRequest, value: string, maxAgeS = SESSION_MAX_AGE_MS / 1000): void {
  const secure = req.protocol === 'https' ? '; Secure' : '';
  reply.header('set-cookie', `${CONSOLE_COOKIE}=${value}; Path=${CONSOLE_PATH}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure}`);
}

/**
 * True when the browser says the request comes from another site: Fetch Metadata (`Sec-Fetch-Site`, sent by every
 * current browser) when present, else the Origin header. A request with neither (curl) is left to the CSRF token.
 */
export function crossSite(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = req.headers.origin;
  if (origin === undefined || origin === 'null') return false;
  try {
    return new URL(origin).host !== req.headers.host;
  } catch {
    return true;
  }
}

/** A path inside the console to go back to after logging in; anything else is the overview. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/console(\/[\w./%?=&-]*)?$/.test(next) && !next.includes('//') ? next : CONSOLE_PATH;
}
