/**
 * The agent's knowledge of one process: the skill library and the prompt builder on the store's database, built
 * from the settings. Worker and ingress get it with the conversation services; the admin API builds its own.
 */
import type { Sql } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import type { Logger } from '../../support/logger.js';
import { SkillLibrary } from '../skills/library.js';
import { SkillStore } from '../skills/store.js';
import { Personalities } from './personalities.js';
import { SessionPrompts } from './session-prompts.js';

export interface Knowledge {
  prompts: SessionPrompts;
  skills: SkillLibrary;
}

type KnowledgeSettings = Pick<HeraldConfig, 'skillsDir' | 'skillMaxChars' | 'personalities' | 'contextFilesMaxChars' | 'timezone' | 'schedulesPerUser'>;

export function openKnowledge(config: KnowledgeSettings, sql: Sql, log: Logger): Knowledge {
  const skills = new SkillLibrary(new SkillStore(sql), { sharedDir: config.skillsDir, maxChars: config.skillMaxChars, log });
  const prompts = new SessionPrompts(sql, {
    personalities: new Personalities(config.personalities),
    skills,
    contextMaxChars: config.contextFilesMaxChars,
    timeZone: config.timezone,
    schedulesPerUser: config.schedulesPerUser,
    log,
  });
  return { prompts, skills };
}
