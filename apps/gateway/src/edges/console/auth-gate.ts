/**
 * The console's login check before routing: an onRequest hook on the root instance for every path under /console,
 * so an unknown console URL gets the same answer as a known one until the client has logged in (fastify's 404 for
 * an unrouted path runs only the root's hooks). The login page and the stylesheet and script stay open.
 *
 * Without a valid session cookie (auth.ts): a page request (GET or HEAD from a browser) is sent to the login page,
 * which brings it back afterwards; anything else — a form post, a script's or a tool's request — gets 401.
 */
import type { FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { requestUnder } from '../admin/auth.js';
import { CONSOLE_PATH, LOGIN_PATH, SECURITY_HEADERS, safeNext, validSession } from './auth.js';
import { ASSET_PATH } from './layout.js';

const ASSETS_UNDER = `${ASSET_PATH}/`;

function isPublic(path: string): boolean {
  return path === LOGIN_PATH || path.startsWith(ASSETS_UNDER);
}

/** Open without a session: the login page and the assets, as sent and by the route matched (if any). */
function publicRequest(req: FastifyRequest): boolean {
  const route = req.routeOptions.url;
  return isPublic(req.url.split('?')[0]) && (route === undefined || isPublic(route));
}

/**
 * A browser asking for a page: it navigates (Fetch Metadata), or accepts HTML, or says nothing of what it accepts.
 * A script's `fetch` (accepting anything, mode `cors` or `same-origin`) and an API client asking for JSON are not.
 */
function wantsPage(req: FastifyRequest): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (req.headers['sec-fetch-mode'] === 'navigate') return true;
  const accept = req.headers.accept;
  return accept === undefined || accept.includes('text/html');
}

export function consoleGate(token: string): onRequestAsyncHookHandler {
  return async (req, reply) => {
    if (!requestUnder(req, CONSOLE_PATH) || publicRequest(req) || validSession(req, token) !== null) return;
    reply.headers(SECURITY_HEADERS);
    if (wantsPage(req)) {
      await reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(safeNext(req.url))}`, 303);
      return;
    }
    await reply.code(401).type('text/plain; charset=utf-8').send(`Log in to the console first (${LOGIN_PATH}).`);
  };
}
