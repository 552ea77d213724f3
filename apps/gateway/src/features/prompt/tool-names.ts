/**
 * The tools a profile's turns offer, by name, worked out from the settings alone — for a session that a command or
 * the HTTP API starts before any worker has run a turn of it (the worker uses its own list, turn/tools.ts). The
 * same rules: agent-core's toolsets, the gateway's schedule tool, the skill tools (execute_code, which depends on
 * the worker's sandbox, is left out of the list on both sides).
 */
import { resolveToolsets } from '@herald/agent-core';
import type { Profile } from '../profiles/table.js';
import type { SkillLibrary } from '../skills/library.js';
import { SKILL_MANAGE_TOOL, SKILL_VIEW_TOOL } from '../skills/tools.js';

const SCHEDULE_TOOLSET = 'schedule';
/** The gateway's sandboxed code toolset (features/sandbox): offered per worker, as its backend allows; not named here. */
const CODE_TOOLSET = 'code';

export function plannedToolNames(profile: Profile, skills: SkillLibrary, schedulesPerUser: number): string[] {
  const names = resolveToolsets(profile.toolsets.filter((t) => t !== SCHEDULE_TOOLSET && t !== CODE_TOOLSET));
  const schedule = schedulesPerUser > 0 && (profile.toolsets.includes(SCHEDULE_TOOLSET) || profile.toolsets.includes('full'));
  const owner = { name: profile.name, skillsDir: profile.skillsDir, skillManage: profile.skillManage, reviewWrites: profile.review.enabled };
  const skillTools = skills.offeredTo(owner) ? [SKILL_VIEW_TOOL, ...(profile.skillManage ? [SKILL_MANAGE_TOOL] : [])] : [];
  return [...names, ...skillTools, ...(schedule ? [SCHEDULE_TOOLSET] : [])];
}
