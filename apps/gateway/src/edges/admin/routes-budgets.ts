/**
 * Budgets in the admin API: the configured caps with today's and this month's spend per scope, and a reset of one
 * scope's spend (`global`, `profile:<name>`, `user:<platform>:<id>`, `profile-user:<profile>:<platform>:<id>`).
 */
import type { FastifyInstance } from 'fastify';
import type { BudgetGuard } from '../../features/budgets/guard.js';
import { errorSchema } from './schemas.js';

const SCOPE = /^(global|profile:[a-z0-9][a-z0-9_-]*|user:[a-z]+:\S+|profile-user:[a-z0-9][a-z0-9_-]*:[a-z]+:\S+)$/;

export function budgetRoutes(app: FastifyInstance, budgets: BudgetGuard): void {
  app.get<{ Querystring: { scope?: string } }>(
    '/admin/budgets',
    {
      schema: {
        summary: "Configured budgets and the current day's and month's spend per scope, most spent first",
        tags: ['budgets'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { scope: { type: 'string', maxLength: 300, description: 'Only scopes starting with this (e.g. user:telegram:)' } },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              budgets: { type: 'array', items: { type: 'object', additionalProperties: true } },
              periods: { type: 'object', properties: { day: { type: 'string' }, month: { type: 'string' } } },
              spend: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    scope: { type: 'string' },
                    period: { type: 'string' },
                    tokens: { type: 'integer' },
                    cost_usd: { type: 'number' },
                    warned: { type: 'boolean' },
                  },
                },
              },
            },
          },
        },
      },
    },
    async (req) => ({
      budgets: budgets.budgets,
      periods: { day: budgets.periodKey('day'), month: budgets.periodKey('month') },
      spend: (await budgets.spendNow(req.query.scope ?? '')).map((r) => ({
        scope: r.scope,
        period: r.period,
        tokens: r.tokens,
        cost_usd: r.costUsd,
        warned: r.warned,
      })),
    }),
  );

  app.post<{ Body: { scope: string; period?: 'day' | 'month' } }>(
    '/admin/budgets/reset',
    {
      schema: {
        summary: "Forget one scope's spend in the current day, month or both (turns it refused may run again)",
        tags: ['budgets'],
        body: {
          type: 'object',
          additionalProperties: false,
          required: ['scope'],
          properties: {
            scope: { type: 'string', maxLength: 300, description: 'global, profile:<name>, user:<platform>:<id> or profile-user:<profile>:<platform>:<id>' },
            period: { type: 'string', enum: ['day', 'month'], description: 'Absent: both' },
          },
        },
        response: { 200: { type: 'object', properties: { reset: { type: 'integer' } } }, 400: errorSchema },
      },
    },
    async (req, reply) => {
      if (!SCOPE.test(req.body.scope)) {
        return reply
          .code(400)
          .send({ error: 'invalid_scope', message: 'scope must be global, profile:<name>, user:<platform>:<id> or profile-user:<profile>:<platform>:<id>' });
      }
      return { reset: await budgets.reset(req.body.scope, req.body.period) };
    },
  );
}
