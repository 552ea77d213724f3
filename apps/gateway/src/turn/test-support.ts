/**
 * For tests: the real team controls and prep gate of a turn, from the conversation services' settings. With the
 * default settings (no LLM cap, no profile turn limits) no semaphore is made, so the Redis client never connects.
 */
import { Redis } from 'ioredis';
import type { ConversationServices } from '../features/sessions/services.js';
import { createTeamControls, type TeamControls } from './team-controls.js';
import { PrepGate } from './prep-gate.js';

export function testTurnControls(services: ConversationServices): { controls: TeamControls; prepGate: PrepGate } {
  const { config } = services;
  const redis = new Redis(config.redisUrl, { lazyConnect: true });
  const controls = createTeamControls({ config, budgets: services.budgets, pricing: services.pricing, redis, profiles: services.profiles });
  return { controls, prepGate: new PrepGate(config.turnPrepLimit) };
}
