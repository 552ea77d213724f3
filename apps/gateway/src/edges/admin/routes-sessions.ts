/**
 * Sessions in the admin API: list (filters, cursor pagination), one session with its transcript, full-text
 * search, and resetting a session key (its current session ends with end_reason `admin_reset`; the next message
 * on that key starts a new one).
 */
import type { FastifyInstance } from 'fastify';
import { InvalidCursorError, type SessionSource, type SessionStore } from '@herald/agent-core';
import { SOURCES, errorSchema, messageJson, messageSchema, searchHitJson, searchHitSchema, sessionJson, sessionSchema } from './schemas.js';

const ADMIN_RESET_REASON = 'admin_reset';
const MAX_PAGE = 200;
const MAX_MESSAGES = 1000;

interface ListQuery {
  source?: SessionSource;
  user?: string;
  profile?: string;
  active?: boolean;
  cursor?: string;
  limit?: number;
}

interface ShowQuery {
  after_id?: number;
  limit?: number;
}

interface SearchQuery {
  q: string;
  source?: SessionSource;
  user?: string;
  limit?: number;
}

const sourceParam = { type: 'string', enum: [...SOURCES], description: 'Platform the session came from' } as const;

export function sessionRoutes(app: FastifyInstance, store: SessionStore): void {
  listSessions(app, store);
  showSession(app, store);
  searchTranscripts(app, store);
  resetSessionKey(app, store);
}

/** GET /admin/sessions: a page of sessions, newest first. */
function listSessions(app: FastifyInstance, store: SessionStore): void {
  app.get<{ Querystring: ListQuery }>(
    '/admin/sessions',
    {
      schema: {
        summary: 'List sessions, newest first',
        tags: ['sessions'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            source: sourceParam,
            user: { type: 'string', description: 'Platform user id' },
            profile: { type: 'string', description: 'Agent profile name' },
            active: { type: 'boolean', description: 'true: open sessions only; false: ended ones only' },
            cursor: { type: 'string', description: 'next_cursor of the previous page' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 50 },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: { sessions: { type: 'array', items: sessionSchema }, next_cursor: { type: ['string', 'null'] } },
          },
          400: errorSchema,
        },
      },
    },
    async (req, reply) => {
      const q = req.query;
      try {
        const page = await store.listSessions({ source: q.source, userId: q.user, profile: q.profile, active: q.active, cursor: q.cursor, limit: q.limit });
        return { sessions: page.sessions.map(sessionJson), next_cursor: page.nextCursor };
      } catch (err) {
        if (err instanceof InvalidCursorError) return reply.code(400).send({ error: 'invalid_cursor', message: err.message });
        throw err;
      }
    },
  );
}

/** GET /admin/sessions/:id: one session with its transcript. */
function showSession(app: FastifyInstance, store: SessionStore): void {
  app.get<{ Params: { id: string }; Querystring: ShowQuery }>(
    '/admin/sessions/:id',
    {
      schema: {
        summary: 'One session with its messages',
        tags: ['sessions'],
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            after_id: { type: 'integer', minimum: 0, description: 'Only messages with a larger id (paging a long transcript)' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_MESSAGES, default: 500 },
          },
        },
        response: {
          200: { type: 'object', properties: { session: sessionSchema, messages: { type: 'array', items: messageSchema } } },
          404: errorSchema,
        },
      },
    },
    async (req, reply) => {
      const session = await store.getSession(req.params.id);
      if (!session) return reply.code(404).send({ error: 'not_found', message: `no session ${req.params.id}` });
      const messages = await store.getMessages(session.id, { afterId: req.query.after_id, limit: req.query.limit });
      return { session: sessionJson(session), messages: messages.map(messageJson) };
    },
  );
}

/** GET /admin/search: full-text search over every transcript. */
function searchTranscripts(app: FastifyInstance, store: SessionStore): void {
  app.get<{ Querystring: SearchQuery }>(
    '/admin/search',
    {
      schema: {
        summary: 'Full-text search over every transcript',
        tags: ['sessions'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          required: ['q'],
          properties: {
            q: { type: 'string', minLength: 1, description: 'Words to find (FTS5; quoted phrases allowed)' },
            source: sourceParam,
            user: { type: 'string' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 20 },
          },
        },
        response: { 200: { type: 'object', properties: { hits: { type: 'array', items: searchHitSchema } } } },
      },
    },
    async (req) => {
      const { q, source, user, limit } = req.query;
      return { hits: (await store.search(q, { source, userId: user, limit })).map(searchHitJson) };
    },
  );
}

/** POST /admin/sessions/reset: end a key's current session. */
function resetSessionKey(app: FastifyInstance, store: SessionStore): void {
  app.post<{ Body: { key: string } }>(
    '/admin/sessions/reset',
    {
      schema: {
        summary: "End a session key's current session (end_reason admin_reset); the next message starts a new one",
        tags: ['sessions'],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['key'],
          properties: { key: { type: 'string', minLength: 1, description: 'Session key, e.g. agent:main:telegram:dm:12345' } },
        },
        response: { 200: { type: 'object', properties: { session: sessionSchema } }, 404: errorSchema },
      },
    },
    async (req, reply) => {
      const current = await store.currentSession(req.body.key);
      if (!current || current.endedAt !== null) {
        return reply.code(404).send({ error: 'not_found', message: `no open session for key ${req.body.key}` });
      }
      return { session: sessionJson(await store.endSession(current.id, ADMIN_RESET_REASON)) };
    },
  );
}
