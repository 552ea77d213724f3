/**
 * For tests: the real team controls, prep gate and review services of a turn, from the conversation services' settings. With the
 * default settings (no LLM cap, no profile turn limits) no semaphore is made, so the Redis client never connects.
 */
import { Redis } from 'ioredis';
import type { ConversationServices } from '../features/sessions/services.js';
import { createTeamControls, PrepGate, type TeamControls } from './team-controls.js';
import { pino } from 'pino';
import { ButtonStore } from '../features/interactions/buttons.js';
import { LoggedSkillEdits } from '../features/llm/post-turn-review.js';
import type { ReviewServices } from './stages/deps.js';

export function testTurnControls(services: ConversationServices): { controls: TeamControls; prepGate: PrepGate; review: ReviewServices } {
  const { config } = services;
  const redis = new Redis(config.redisUrl, { lazyConnect: true });
  const controls = createTeamControls({ config, budgets: services.budgets, pricing: services.pricing, redis, profiles: services.profiles });
  const review = { buttons: new ButtonStore(redis, config.redisPrefix), skillEdits: new LoggedSkillEdits(pino({ level: 'silent' })) };
  return { controls, prepGate: new PrepGate(config.turnPrepLimit), review };
}
