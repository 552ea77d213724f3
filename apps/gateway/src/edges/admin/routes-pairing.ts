/**
 * Pairing in the admin API (the same PairingService the CLI uses): list pending codes and approved users,
 * approve a code, revoke a user. Codes are never shown: only the person who received one can read it out.
 */
import type { FastifyInstance } from 'fastify';
import type { Platform } from '@herald/adapters';
import { PLATFORMS, type PairingService } from '../../features/pairing/index.js';
import { errorSchema } from './schemas.js';

const platformSchema = { type: 'string', enum: [...PLATFORMS] } as const;
const iso = (ms: number): string => new Date(ms).toISOString();

const userSchema = {
  type: 'object',
  properties: {
    platform: { type: 'string' },
    user_id: { type: 'string' },
    user_name: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
    approved_at: { type: 'string', format: 'date-time' },
  },
} as const;

export function pairingRoutes(app: FastifyInstance, pairing: PairingService): void {
  app.get<{ Querystring: { platform?: Platform } }>(
    '/admin/pairing',
    {
      schema: {
        summary: 'Pending pairing requests and paired users, newest first',
        tags: ['pairing'],
        querystring: { type: 'object', additionalProperties: false, properties: { platform: platformSchema } },
        response: {
          200: {
            type: 'object',
            properties: { pending: { type: 'array', items: userSchema }, approved: { type: 'array', items: userSchema } },
          },
        },
      },
    },
    async (req) => {
      const { pending, approved } = await pairing.list(req.query.platform);
      return {
        pending: pending.map((p) => ({
          platform: p.platform,
          user_id: p.userId,
          user_name: p.userName,
          created_at: iso(p.createdAt),
          expires_at: iso(p.expiresAt),
        })),
        approved: approved.map((a) => ({ platform: a.platform, user_id: a.userId, user_name: a.userName, approved_at: iso(a.approvedAt) })),
      };
    },
  );

  app.post<{ Body: { platform: Platform; code: string } }>(
    '/admin/pairing/approve',
    {
      schema: {
        summary: 'Approve the pairing code a user received; 5 wrong codes lock the platform for an hour',
        tags: ['pairing'],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['platform', 'code'],
          properties: { platform: platformSchema, code: { type: 'string', minLength: 1, maxLength: 64 } },
        },
        response: {
          200: { type: 'object', properties: { platform: { type: 'string' }, user_id: { type: 'string' }, user_name: { type: ['string', 'null'] } } },
          404: { type: 'object', properties: { ...errorSchema.properties, attempts_left: { type: 'integer' } } },
          429: { type: 'object', properties: { ...errorSchema.properties, retry_after_s: { type: 'integer' } } },
        },
      },
    },
    async (req, reply) => {
      const res = await pairing.approve(req.body.platform, req.body.code);
      switch (res.status) {
        case 'approved':
          return { platform: res.platform, user_id: res.userId, user_name: res.userName };
        case 'invalid':
          return reply
            .code(404)
            .send({ error: 'invalid_code', message: 'no pending request with this code (wrong or expired)', attempts_left: res.attemptsLeft });
        case 'locked': {
          const seconds = Math.ceil(res.retryAfterMs / 1000);
          return reply
            .code(429)
            .header('retry-after', String(seconds))
            .send({ error: 'locked', message: 'too many wrong codes: pairing is paused', retry_after_s: seconds });
        }
      }
    },
  );

  // Deny and revoke act on one person: the same body, one flag in the answer, a 404 when there was nothing to act on.
  const userAction = (
    path: string,
    summary: string,
    flag: 'denied' | 'revoked',
    act: (p: Platform, u: string) => Promise<boolean>,
    missing: (p: Platform, u: string) => string,
  ): void => {
    app.post<{ Body: { platform: Platform; user_id: string } }>(
      path,
      {
        schema: {
          summary,
          tags: ['pairing'],
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['platform', 'user_id'],
            properties: { platform: platformSchema, user_id: { type: 'string', minLength: 1 } },
          },
          response: { 200: { type: 'object', properties: { [flag]: { type: 'boolean' } } }, 404: errorSchema },
        },
      },
      async (req, reply) => {
        if (await act(req.body.platform, req.body.user_id)) return { [flag]: true };
        return reply.code(404).send({ error: 'not_found', message: missing(req.body.platform, req.body.user_id) });
      },
    );
  };
  userAction(
    '/admin/pairing/deny',
    'Turn a pending pairing request down: its code stops working (the user may ask again after 10 minutes)',
    'denied',
    (p, u) => pairing.deny(p, u),
    (p, u) => `no pending pairing request from ${p} user ${u}`,
  );
  userAction(
    '/admin/pairing/revoke',
    "Take a paired user's access away (allowlists in the config are not affected)",
    'revoked',
    (p, u) => pairing.revoke(p, u),
    (p, u) => `${p} user ${u} is not paired`,
  );
}
