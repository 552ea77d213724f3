/**
 * The skills one profile can use, from three sources, the first that has a name wins:
 *   1. agent — written by the agent with skill_manage (or the post-turn review via writeSkill), in the store;
 *   2. profile — the profile's own folder (`skills_dir` of the profile);
 *   3. shared — HERALD_SKILLS_DIR, every profile's.
 * Folders are read when asked (a session's index at its start, a skill_view call), so a skill added on disk is
 * seen by the next session without a restart.
 */
import type { Logger } from '../../support/logger.js';
import { readSkillFile, scanSkillDir, skillFiles, type DiskSkill } from './disk.js';
import { SKILL_FILE, SkillFormatError, parseSkill, skillNameProblem, type SkillDoc } from './skill-file.js';
import type { SkillStore } from './store.js';

type SkillSource = 'agent' | 'profile' | 'shared';

export interface SkillEntry {
  name: string;
  description: string;
  source: SkillSource;
}

/** Where one profile's skills come from. */
export interface SkillOwner {
  /** The profile's name: the store's skills are kept under it. */
  name: string;
  /** The profile's own skills folder. */
  skillsDir?: string;
}

export interface SkillLibraryOptions {
  /** HERALD_SKILLS_DIR: every profile's skills. */
  sharedDir?: string;
  /** HERALD_SKILL_MAX_CHARS: the largest SKILL.md the agent may write. */
  maxChars: number;
  log: Logger;
}

interface Found {
  entry: SkillEntry;
  /** The stored text (agent) or the folder (disk). */
  content?: string;
  disk?: DiskSkill;
}

export class SkillLibrary {
  /** Folders already reported as skipped (each is said once per process, not on every read). */
  private readonly reported = new Set<string>();

  constructor(
    private readonly store: SkillStore,
    private readonly options: SkillLibraryOptions,
  ) {}

  /** Whether the profile can have skills at all: a folder to read, or skill_manage to write them. */
  offeredTo(owner: SkillOwner & { skillManage: boolean; reviewWrites?: boolean }): boolean {
    // The agent's own skills may exist where it writes them (skill_manage) or the review after a turn saves them.
    return owner.skillManage || owner.reviewWrites === true || owner.skillsDir !== undefined || this.options.sharedDir !== undefined;
  }

  /** The index: every skill the profile can use, by name. */
  async index(owner: SkillOwner): Promise<SkillEntry[]> {
    return [...(await this.all(owner)).values()].map((f) => f.entry).sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * A skill's SKILL.md body (with the list of its other files), or one of those files. Throws with a message for
   * the model when there is no such skill or file.
   */
  async view(owner: SkillOwner, name: string, file?: string): Promise<string> {
    const found = (await this.all(owner)).get(name);
    if (!found) throw new Error(`no skill "${name}"; the skills index in the system prompt lists them`);
    const wanted = file?.trim();
    if (found.content !== undefined) {
      if (wanted && wanted !== SKILL_FILE) throw new Error(`the skill "${name}" has no file "${wanted}" (it was written by the agent: SKILL.md only)`);
      return parseSkill(found.content).body.trim();
    }
    const disk = found.disk as DiskSkill;
    if (wanted && wanted !== SKILL_FILE) return readSkillFile(disk.dir, wanted);
    const files = await skillFiles(disk.dir);
    const list = files.length > 0 ? `\n\nFiles of this skill (skill_view with file): ${files.join(', ')}` : '';
    return `${disk.body.trim()}${list}`;
  }

  /**
   * Writes a skill to the profile's own skills in the store: the same checks as the skill_manage tool (the Agent
   * Skills front matter, the name, the size cap). It shadows a skill of the same name on disk for this profile.
   * Used by skill_manage and by anything else that proposes skills (the post-turn review).
   */
  async writeSkill(profile: string, name: string, content: string): Promise<{ created: boolean; skill: SkillDoc }> {
    const problem = skillNameProblem(name);
    if (problem) throw new SkillFormatError(problem);
    if (content.length > this.options.maxChars) throw new SkillFormatError(`the skill has ${content.length} characters; at most ${this.options.maxChars}`);
    const skill = parseSkill(content, name);
    const created = await this.store.put(profile, name, skill.description, content);
    this.options.log.info({ profile, skill: name, created, chars: content.length }, created ? 'skill written' : 'skill replaced');
    return { created, skill };
  }

  /** Removes an agent-written skill (disk skills are read-only). */
  async deleteSkill(profile: string, name: string): Promise<boolean> {
    return this.store.remove(profile, name);
  }

  private async all(owner: SkillOwner): Promise<Map<string, Found>> {
    const byName = new Map<string, Found>();
    for (const s of await this.store.list(owner.name))
      byName.set(s.name, { entry: { name: s.name, description: s.description, source: 'agent' }, content: s.content });
    const dirs: [SkillSource, string | undefined][] = [
      ['profile', owner.skillsDir],
      ['shared', this.options.sharedDir],
    ];
    for (const [source, dir] of dirs) {
      if (!dir) continue;
      const scan = await scanSkillDir(dir);
      for (const s of scan.skipped) {
        const key = `${s.dir}\n${s.reason}`;
        if (this.reported.has(key)) continue;
        this.reported.add(key);
        this.options.log.warn({ dir: s.dir, reason: s.reason }, `skill folder skipped: ${s.reason}`);
      }
      for (const s of scan.skills) if (!byName.has(s.name)) byName.set(s.name, { entry: { name: s.name, description: s.description, source }, disk: s });
    }
    return byName;
  }
}
