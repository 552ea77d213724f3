/**
 * One skill's SKILL.md, in the open Agent Skills format: YAML front matter between `---` lines with `name` and
 * `description` (other keys such as `license` or `metadata` are kept as they are), then a Markdown body the agent
 * loads on demand. The rules are the format's: a name of 1–64 lowercase letters, digits and single hyphens (not at
 * either end), equal to its folder's name; a description of 1–1024 characters.
 */
import { isRecord } from '@herald/agent-core';
import { parse as parseYaml } from 'yaml';

export const SKILL_FILE = 'SKILL.md';
const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SKILL_NAME_MAX = 64;
export const SKILL_DESCRIPTION_MAX = 1024;
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export interface SkillDoc {
  name: string;
  description: string;
  /** The Markdown after the front matter. */
  body: string;
}

/** A SKILL.md that does not follow the format: the message says what to fix. */
export class SkillFormatError extends Error {
  override name = 'SkillFormatError';
}

/** Why `name` is not a skill name, or null. */
export function skillNameProblem(name: string): string | null {
  if (name.length === 0 || name.length > SKILL_NAME_MAX) return `a skill name has 1 to ${SKILL_NAME_MAX} characters`;
  if (!SKILL_NAME.test(name)) return 'a skill name is lowercase letters, digits and single hyphens, not at either end (e.g. "deploy-checklist")';
  return null;
}

/** Parses and checks a SKILL.md; `folder` (its directory's name), when given, must equal the name. */
export function parseSkill(text: string, folder?: string): SkillDoc {
  const m = FRONT_MATTER.exec(text);
  if (!m) throw new SkillFormatError('SKILL.md must start with YAML front matter between two "---" lines, with name and description');
  let meta: unknown;
  try {
    meta = parseYaml(m[1]);
  } catch (err) {
    throw new SkillFormatError(`the front matter is not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isRecord(meta)) throw new SkillFormatError('the front matter must be a mapping with name and description');
  const { name, description } = meta;
  if (typeof name !== 'string') throw new SkillFormatError('the front matter needs a name (text)');
  const nameProblem = skillNameProblem(name);
  if (nameProblem) throw new SkillFormatError(`${nameProblem}; got "${name.slice(0, 80)}"`);
  if (folder !== undefined && folder !== name) throw new SkillFormatError(`the name "${name}" must equal its folder's name "${folder}"`);
  if (typeof description !== 'string' || description.trim() === '')
    throw new SkillFormatError('the front matter needs a description (text saying what the skill is for and when to use it)');
  if (description.length > SKILL_DESCRIPTION_MAX)
    throw new SkillFormatError(`the description has ${description.length} characters; at most ${SKILL_DESCRIPTION_MAX}`);
  return { name, description: oneLine(description), body: text.slice(m[0].length) };
}

/** The description as one line for the index (a YAML block scalar may span several). */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
