/**
 * The operator console at /console: server-rendered pages behind the admin token (auth.ts), on the admin server of
 * any process that has HERALD_ADMIN_TOKEN. GET pages read; POST forms act (pairing, logout), then redirect back
 * (post/redirect/get), so a reload never repeats an action.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SessionSource } from '@herald/agent-core';
import type { Platform } from '@herald/adapters';
import { sameToken } from '../admin/auth.js';
import { SOURCES } from '../admin/schemas.js';
import { PLATFORMS } from '../../features/pairing/index.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { CONSOLE_PATH, LOGIN_PATH, SECURITY_HEADERS, crossSite, csrfTokenFor, safeNext, sessionCookieValue, setSessionCookie, validSession } from './auth.js';
import { consoleGate } from './auth-gate.js';
import type { ConsoleDeps } from './data.js';
import { overviewData, sessionsData, usageData } from './data.js';
import { ASSET_PATH, page, type PageOptions } from './layout.js';
import { loginBody } from './login.js';
import { pricedBy } from './costs.js';
import { notFoundBody } from './not-found.js';
import { LIVE_QUEUE_STATES, apiStateHtml, overviewBody } from './overview.js';
import { pairingBody } from './pairing-page.js';
import { APPROVALS_PAGE, approvalsBody } from './approvals-page.js';
import { sessionLabel } from './session-label.js';
import { sessionsBody } from './sessions.js';
import { skillBody, skillsBody } from './skills-page.js';
import { transcriptBody } from './transcript.js';
import { USAGE_WINDOWS, usageBody } from './usage-page.js';

const TRANSCRIPT_PAGE = 500;
const FORM_LIMIT = 64 * 1024;
/** A route of the OpenAI-compatible API: present when this process serves /v1 (edges/api/routes.ts). */
const API_ROUTE = { method: 'POST', url: '/v1/chat/completions' } as const;

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession?: string;
  }
}

type Form = Record<string, string>;

const NOTICES: Record<string, { kind: 'ok' | 'error'; text: string }> = {
  approved: { kind: 'ok', text: 'Approved: they can talk to the bot now.' },
  denied: { kind: 'ok', text: 'Denied: that code no longer works.' },
  revoked: { kind: 'ok', text: 'Revoked: they can no longer talk to the bot.' },
  invalid: { kind: 'error', text: 'That code does not match this request (wrong or expired). Five wrong codes pause pairing for an hour.' },
  locked: { kind: 'error', text: 'Pairing on this platform is paused after too many wrong codes; try again later.' },
  gone: { kind: 'error', text: 'That request or person is no longer there.' },
};

/** What the page handlers share: the deps, the price list, and the page helpers bound to the admin token. */
interface ConsolePages {
  deps: ConsoleDeps;
  priced: ReturnType<typeof pricedBy>;
  /** Whether this process serves the OpenAI-compatible API. */
  servesApi(): boolean;
  csrf(req: FastifyRequest): string;
  /** A 404 as a console page (the logged-in shell when there is a session: unknown asset URLs have none). */
  notFound(req: FastifyRequest, reply: FastifyReply, title: string, text: string): Promise<FastifyReply>;
}

export async function consoleRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  app.addHook('onRequest', consoleGate(deps.token)); // on the root: before routing, unknown URLs included
  const csrf = (req: FastifyRequest): string => csrfTokenFor(deps.token, req.consoleSession!);
  const pages: ConsolePages = {
    deps,
    priced: pricedBy(deps.prices),
    // Asked of the router each time: whether /v1 is mounted is the truth, whatever the configuration says.
    servesApi: () => app.hasRoute(API_ROUTE),
    csrf,
    notFound(req, reply, title, text) {
      reply.code(404);
      return html(reply, { title, section: 'not-found', csrf: req.consoleSession ? csrf(req) : undefined, body: notFoundBody(text) });
    },
  };
  await app.register(
    async (c) => {
      guard(c, deps);
      loginRoutes(c, deps);
      readingRoutes(c, pages);
      pairingRoutes(c, pages);
      skillRoutes(c, pages);
      // Behind the login like every page (the onRequest hook runs first): an unknown URL is an HTML page.
      c.setNotFoundHandler(async (req, reply) => pages.notFound(req, reply, 'Page not found', `The console has no page at ${req.url.split('?')[0]}.`));
    },
    { prefix: CONSOLE_PATH },
  );
}

/** Forms parsed, security headers on every answer, the login required, cross-site POSTs and forged forms refused. */
function guard(c: FastifyInstance, deps: ConsoleDeps): void {
  c.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_LIMIT }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(String(body))));
  });
  c.addHook('onSend', async (_req, reply, payload) => {
    reply.headers(SECURITY_HEADERS);
    return payload;
  });
  c.addHook('onRequest', async (req, reply) => {
    const path = req.url.split('?')[0];
    if (path === LOGIN_PATH || path.startsWith(`${ASSET_PATH}/`)) return;
    const session = validSession(req, deps.token);
    if (session === null) {
      if (req.method === 'GET' || req.method === 'HEAD') return reply.redirect(`${LOGIN_PATH}?next=${encodeURIComponent(safeNext(req.url))}`, 303);
      return reply.code(403).type('text/plain').send('Log in to the console first.');
    }
    if (req.method === 'POST' && crossSite(req)) return reply.code(403).type('text/plain').send('Cross-site request refused.');
    req.consoleSession = session;
  });
  // Every POST but the login carries the session's CSRF token.
  c.addHook('preHandler', async (req, reply) => {
    if (req.method !== 'POST' || req.url.split('?')[0] === LOGIN_PATH) return;
    const given = (req.body as Form | undefined)?._csrf;
    if (typeof given !== 'string' || !sameToken(given, csrfTokenFor(deps.token, req.consoleSession!))) {
      return reply.code(403).type('text/plain').send('The form was stale or forged (CSRF token missing or wrong). Reload the page and try again.');
    }
  });
}

/** The assets, the login form, logging in and out. */
function loginRoutes(c: FastifyInstance, deps: ConsoleDeps): void {
  c.get('/assets/console.css', async (_req, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS));
  c.get('/assets/console.js', async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(CONSOLE_JS));

  c.get<{ Querystring: { next?: string } }>('/login', async (req, reply) => {
    if (validSession(req, deps.token)) return reply.redirect(safeNext(req.query.next), 303);
    return html(reply, { title: 'Log in', section: 'login', body: loginBody(safeNext(req.query.next), false) });
  });
  c.post<{ Body: Form }>('/login', async (req, reply) => {
    const form = req.body ?? {};
    if (crossSite(req)) return reply.code(403).type('text/plain').send('Cross-site request refused.');
    if (typeof form.token !== 'string' || !sameToken(form.token, deps.token)) {
      deps.log.warn({ ip: req.ip }, 'console login with a wrong token');
      reply.code(401);
      return html(reply, {
        title: 'Log in',
        section: 'login',
        body: loginBody(safeNext(form.next), true),
        notice: { kind: 'error', text: 'That is not the admin token.' },
      });
    }
    setSessionCookie(reply, req, sessionCookieValue(deps.token));
    return reply.redirect(safeNext(form.next), 303);
  });
  c.post('/logout', async (req, reply) => {
    setSessionCookie(reply, req, '', 0);
    return reply.redirect(LOGIN_PATH, 303);
  });
}

/** The pages that only read: overview (and its live queue counts), sessions, a transcript, usage. */
function readingRoutes(c: FastifyInstance, pages: ConsolePages): void {
  const { deps, priced, csrf } = pages;
  c.get('/', async (req, reply) => {
    const d = await overviewData(deps);
    const api = apiStateHtml(pages.servesApi(), d.health.role);
    return html(reply, { title: 'Overview', section: 'overview', csrf: csrf(req), body: overviewBody(d.health, d.dependencies, d.week, api, priced) });
  });
  c.get('/queue.json', async () => {
    const [counts, paused] = await Promise.all([deps.queue.getJobCounts(...LIVE_QUEUE_STATES), deps.queue.isPaused()]);
    return { counts, paused, at: new Date().toISOString() };
  });

  c.get<{ Querystring: { q?: string; source?: string; cursor?: string } }>('/sessions', async (req, reply) => {
    const q = (req.query.q ?? '').trim();
    const source = (SOURCES as readonly string[]).includes(req.query.source ?? '') ? (req.query.source as SessionSource) : undefined;
    const view = await sessionsData(deps, { q, source, cursor: req.query.cursor || undefined }, priced);
    return html(reply, { title: q ? 'Search' : 'Sessions', section: 'sessions', csrf: csrf(req), body: sessionsBody(view) });
  });
  c.get<{ Params: { id: string }; Querystring: { after?: string } }>('/sessions/:id', async (req, reply) => {
    const s = await deps.store.getSessionOverview(req.params.id);
    if (!s) return pages.notFound(req, reply, 'Session not found', `There is no session ${req.params.id}.`);
    const after = /^\d{1,15}$/.test(req.query.after ?? '') ? Number(req.query.after) : 0;
    const messages = await deps.store.getMessages(s.id, { afterId: after, limit: TRANSCRIPT_PAGE + 1 });
    const later = messages.length > TRANSCRIPT_PAGE ? messages[TRANSCRIPT_PAGE - 1].id : null;
    return html(reply, {
      title: sessionLabel(s),
      section: 'sessions',
      csrf: csrf(req),
      body: transcriptBody(s, messages.slice(0, TRANSCRIPT_PAGE), later, priced, Date.now()),
    });
  });

  c.get<{ Querystring: { days?: string } }>('/usage', async (req, reply) => {
    const days = USAGE_WINDOWS.find((d) => String(d) === req.query.days) ?? 30;
    const now = new Date();
    const u = await usageData(deps, days, now);
    return html(reply, { title: 'Usage and spend', section: 'usage', csrf: csrf(req), body: usageBody(days, u, now, priced) });
  });
  c.get('/approvals', async (req, reply) => {
    const records = await deps.approvals.list({ limit: APPROVALS_PAGE });
    return html(reply, { title: 'Approvals', section: 'approvals', csrf: csrf(req), body: approvalsBody(records) });
  });
}

/** The pairing page and its forms: approve by code, deny a request, revoke someone approved. */
function pairingRoutes(c: FastifyInstance, pages: ConsolePages): void {
  const { deps, csrf } = pages;
  c.get<{ Querystring: { done?: string; left?: string } }>('/pairing', async (req, reply) => {
    const { pending, approved } = await deps.pairing.list();
    const base = NOTICES[req.query.done ?? ''] ?? null;
    const left = /^\d$/.test(req.query.left ?? '') ? ` ${req.query.left} attempts left.` : '';
    const notice = base ? { ...base, text: base.text + (req.query.done === 'invalid' ? left : '') } : null;
    return html(reply, { title: 'Pairing', section: 'pairing', csrf: csrf(req), notice, body: pairingBody(pending, approved, csrf(req)) });
  });
  c.post<{ Body: Form }>('/pairing/:action', async (req, reply) => {
    const action = (req.params as { action: string }).action;
    const form = req.body ?? {};
    const platform = form.platform as Platform;
    if (!(PLATFORMS as readonly string[]).includes(platform) || typeof form.user_id !== 'string')
      return reply.code(400).type('text/plain').send('Unknown platform or user.');
    const back = (done: string, extra = ''): FastifyReply => reply.redirect(`${CONSOLE_PATH}/pairing?done=${done}${extra}`, 303);
    switch (action) {
      case 'approve': {
        const res = await deps.pairing.approve(platform, String(form.code ?? ''));
        // The code decides whose request is approved (it may be another row's: the code proves who asked).
        if (res.status === 'approved') deps.log.info({ platform, userId: res.userId }, 'console: pairing approved');
        return res.status === 'approved' ? back('approved') : res.status === 'locked' ? back('locked') : back('invalid', `&left=${res.attemptsLeft}`);
      }
      case 'deny':
        return back((await deps.pairing.deny(platform, form.user_id)) ? 'denied' : 'gone');
      case 'revoke':
        return back((await deps.pairing.revoke(platform, form.user_id)) ? 'revoked' : 'gone');
      default:
        return pages.notFound(req, reply, 'Page not found', `The console has no pairing action “${action}”.`);
    }
  });
}

/** Every profile's skills, and one skill's instructions. */
function skillRoutes(c: FastifyInstance, pages: ConsolePages): void {
  const { deps, csrf } = pages;
  c.get('/skills', async (req, reply) =>
    html(reply, { title: 'Skills', section: 'skills', csrf: csrf(req), body: await skillsBody(deps.knowledge, deps.profiles.list()) }),
  );
  c.get<{ Params: { profile: string; name: string } }>('/skills/:profile/:name', async (req, reply) => {
    const { profile, name } = req.params;
    if (!deps.profiles.has(profile)) return pages.notFound(req, reply, 'Skill not found', `There is no profile ${profile}.`);
    const p = deps.profiles.get(profile);
    try {
      const body = await deps.knowledge.skills.view({ name: p.name, skillsDir: p.skillsDir }, name);
      return html(reply, { title: `Skill ${name}`, section: 'skills', csrf: csrf(req), body: skillBody(profile, name, body) });
    } catch (err) {
      return pages.notFound(req, reply, 'Skill not found', (err as Error).message);
    }
  });
}

async function html(reply: FastifyReply, opts: PageOptions): Promise<FastifyReply> {
  return reply.type('text/html; charset=utf-8').send(page(opts));
}
