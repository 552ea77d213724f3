/**
 * The agent's knowledge in the admin API: how a session's system prompt was built (its layers, its personality,
 * the prompt itself) and each profile's skills (features/prompt, features/skills).
 */
import type { FastifyInstance } from 'fastify';
import type { SessionStore } from '@herald/agent-core';
import type { Knowledge } from '../../features/prompt/knowledge.js';
import type { ProfileTable } from '../../features/profiles/table.js';
import { errorSchema } from './schemas.js';

const layerSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', enum: ['identity', 'profile', 'context', 'skills', 'platform', 'tools'] },
    chars: { type: 'integer' },
    detail: { type: 'string' },
  },
} as const;

const skillSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, description: { type: 'string' }, source: { type: 'string', enum: ['agent', 'profile', 'shared'] } },
} as const;

interface KnowledgeRouteDeps {
  store: SessionStore;
  profiles: ProfileTable;
  knowledge: Knowledge;
}

export function knowledgeRoutes(app: FastifyInstance, deps: KnowledgeRouteDeps): void {
  sessionPrompt(app, deps);
  profileSkills(app, deps);
  profileSkill(app, deps);
}

/** GET /admin/sessions/:id/prompt */
function sessionPrompt(app: FastifyInstance, { store, knowledge }: KnowledgeRouteDeps): void {
  app.get<{ Params: { id: string } }>(
    '/admin/sessions/:id/prompt',
    {
      schema: {
        summary: "A session's system prompt: its layers in order (null for a session from before the prompt builder), personality and text",
        tags: ['sessions'],
        params: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        response: {
          200: {
            type: 'object',
            properties: {
              session_id: { type: 'string' },
              personality: { type: ['string', 'null'] },
              layers: { type: ['array', 'null'], items: layerSchema },
              system_prompt: { type: ['string', 'null'] },
            },
          },
          404: errorSchema,
        },
      },
    },
    async (req, reply) => {
      const session = await store.getSession(req.params.id);
      if (!session) return reply.code(404).send({ error: 'not_found', message: `no session ${req.params.id}` });
      const record = await knowledge.prompts.recordFor(store, session);
      return { session_id: session.id, personality: record?.personality ?? null, layers: record?.layers ?? null, system_prompt: session.systemPrompt };
    },
  );
}

const profileParams = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } as const;

/** GET /admin/profiles/:name/skills */
function profileSkills(app: FastifyInstance, { profiles, knowledge }: KnowledgeRouteDeps): void {
  app.get<{ Params: { name: string } }>(
    '/admin/profiles/:name/skills',
    {
      schema: {
        summary: "A profile's skills index: its agent-written skills (the store), its own folder's and the shared folder's",
        tags: ['profiles'],
        params: profileParams,
        response: { 200: { type: 'object', properties: { skills: { type: 'array', items: skillSchema } } }, 404: errorSchema },
      },
    },
    async (req, reply) => {
      if (!profiles.has(req.params.name)) return reply.code(404).send({ error: 'not_found', message: `no profile ${req.params.name}` });
      const p = profiles.get(req.params.name);
      return { skills: await knowledge.skills.index({ name: p.name, skillsDir: p.skillsDir }) };
    },
  );
}

/** GET /admin/profiles/:name/skills/:skill */
function profileSkill(app: FastifyInstance, { profiles, knowledge }: KnowledgeRouteDeps): void {
  app.get<{ Params: { name: string; skill: string } }>(
    '/admin/profiles/:name/skills/:skill',
    {
      schema: {
        summary: "One skill's instructions (SKILL.md body) as the agent's skill_view loads them",
        tags: ['profiles'],
        params: { type: 'object', properties: { name: { type: 'string' }, skill: { type: 'string' } }, required: ['name', 'skill'] },
        response: { 200: { type: 'object', properties: { name: { type: 'string' }, body: { type: 'string' } } }, 404: errorSchema },
      },
    },
    async (req, reply) => {
      if (!profiles.has(req.params.name)) return reply.code(404).send({ error: 'not_found', message: `no profile ${req.params.name}` });
      const p = profiles.get(req.params.name);
      try {
        return { name: req.params.skill, body: await knowledge.skills.view({ name: p.name, skillsDir: p.skillsDir }, req.params.skill) };
      } catch (err) {
        return reply.code(404).send({ error: 'not_found', message: (err as Error).message });
      }
    },
  );
}
