/**
 * Agent profiles in the admin API: each profile with what it is made of and its open sessions, and the routes
 * that pick one per message. A profile's sessions: GET /admin/sessions?profile=<name>.
 */
import type { FastifyInstance } from 'fastify';
import type { SessionStore } from '@herald/agent-core';
import type { ProfileTable } from '../../features/profiles/table.js';
import type { Route } from '../../support/config/profile-schema.js';

const profileSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    model: { type: ['string', 'null'] },
    fallback_models: { type: 'array', items: { type: 'string' } },
    toolsets: { type: 'array', items: { type: 'string' } },
    busy_input_mode: { type: 'string' },
    memory: { type: 'string', enum: ['profile', 'shared'] },
    max_iterations: { type: 'integer' },
    max_concurrent_turns: { type: ['integer', 'null'] },
    open_sessions: { type: 'integer' },
  },
} as const;

export function profileRoutes(app: FastifyInstance, deps: { store: SessionStore; profiles: ProfileTable; routes: readonly Route[] }): void {
  app.get(
    '/admin/profiles',
    {
      schema: {
        summary: 'Agent profiles, their open sessions, and the routes that pick them (first match wins)',
        tags: ['profiles'],
        response: {
          200: {
            type: 'object',
            properties: {
              profiles: { type: 'array', items: profileSchema },
              default_profile: { type: 'string' },
              routes: { type: 'array', items: { type: 'object', additionalProperties: true } },
            },
          },
        },
      },
    },
    async () => {
      const open = await openSessionsByProfile(deps.store);
      return {
        profiles: deps.profiles.list().map((p) => ({
          name: p.name,
          model: p.model ?? null,
          fallback_models: p.fallbackModels,
          toolsets: p.toolsets,
          busy_input_mode: p.busyInputMode,
          memory: p.memory,
          max_iterations: p.maxIterations,
          max_concurrent_turns: p.maxConcurrentTurns ?? null,
          open_sessions: open.get(p.name) ?? 0,
        })),
        default_profile: deps.profiles.defaultName,
        routes: deps.routes,
      };
    },
  );
}

async function openSessionsByProfile(store: SessionStore): Promise<Map<string, number>> {
  const rows = await store.sql.all<{ profile: string | null; n: number | string }>(
    'SELECT profile, COUNT(*) AS n FROM sessions WHERE ended_at IS NULL GROUP BY profile',
  );
  const out = new Map<string, number>();
  for (const r of rows) {
    const name = r.profile ?? 'default';
    out.set(name, (out.get(name) ?? 0) + Number(r.n));
  }
  return out;
}
