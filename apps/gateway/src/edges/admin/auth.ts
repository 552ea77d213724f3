/**
 * Who may use /admin: a request with `Authorization: Bearer <HERALD_ADMIN_TOKEN>`.
 *
 * A browser cannot send that header to the queue dashboard, so /admin/queues also accepts the token once as
 * `?token=`: the answer sets an HttpOnly, SameSite=Strict cookie scoped to /admin/queues and redirects to the
 * same page without the token in the address bar. The cookie holds a digest of the token, never the token.
 *
 * The check runs on the root instance for every path under /admin (`adminGate`), before routing: an unknown
 * /admin path answers 401 like a known one, so a client without the token cannot map the routes.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

export const DASHBOARD_PATH = '/admin/queues';
const ADMIN_PATH = '/admin';
export const DASHBOARD_COOKIE = 'herald_admin';
/** A dashboard login lasts a working day. */
const COOKIE_MAX_AGE_S = 12 * 3600;

/** Constant-time comparison that does not leak the token's length either. */
export function sameToken(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

function cookieValue(token: string): string {
  return createHmac('sha256', token).update('herald dashboard session').digest('base64url');
}

/** The value of the cookie `name` in a Cookie header, or null (the console reads its session cookie with it too). */
export function readCookie(header: string | undefined, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

function bearerOf(req: FastifyRequest): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m ? m[1] : null;
}

/** The onRequest hook of the /admin context. */
export function adminAuth(token: string) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const bearer = bearerOf(req);
    if (bearer !== null && sameToken(bearer, token)) return;

    const url = new URL(req.url, 'http://admin.invalid');
    if (url.pathname === DASHBOARD_PATH || url.pathname.startsWith(`${DASHBOARD_PATH}/`)) {
      const cookie = readCookie(req.headers.cookie, DASHBOARD_COOKIE);
      if (cookie !== null && sameToken(cookie, cookieValue(token))) return;
      const fromQuery = url.searchParams.get('token');
      if (fromQuery !== null && sameToken(fromQuery, token)) {
        url.searchParams.delete('token');
        const secure = req.protocol === 'https' ? '; Secure' : '';
        reply.header(
          'set-cookie',
          `${DASHBOARD_COOKIE}=${cookieValue(token)}; Path=${DASHBOARD_PATH}; HttpOnly; SameSite=Strict; Max-Age=${COOKIE_MAX_AGE_S}${secure}`,
        );
        await reply.redirect(`${url.pathname}${url.search}`, 302);
        return;
      }
    }
    reply.header('www-authenticate', 'Bearer realm="herald-admin"');
    await reply.code(401).send({ error: 'unauthorized', message: 'missing or wrong bearer token (HERALD_ADMIN_TOKEN)' });
  };
}

/** Whether `path` is `prefix` itself or below it. */
function pathUnder(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * Whether the request is for `prefix` or below it: as sent, as percent-decoded (the router decodes before it
 * matches, so `/%61dmin/…` reaches an /admin route), or by the route it matched.
 */
export function requestUnder(req: FastifyRequest, prefix: string): boolean {
  const raw = req.url.split('?')[0];
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Not valid percent-encoding: the router will not match it either; the raw path decides.
  }
  const route = req.routeOptions.url;
  return pathUnder(raw, prefix) || pathUnder(decoded, prefix) || (route !== undefined && pathUnder(route, prefix));
}

/** The root instance's onRequest hook: every request under /admin, routed or not, passes `adminAuth` first. */
export function adminGate(token: string): onRequestAsyncHookHandler {
  const auth = adminAuth(token);
  return async (req, reply) => {
    if (requestUnder(req, ADMIN_PATH)) await auth(req, reply);
  };
}
