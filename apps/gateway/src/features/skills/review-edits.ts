/**
 * The post-turn review's skill edits (turn/stages/review.ts), kept with the agent's own skills in the store: written
 * at once when the profile's review applies its proposals (`apply: auto`), else offered to the user with a button
 * that stands for `/skills save <name>` followed by the skill's text — the command the user could type instead.
 * Either way the same checks as skill_manage (the Agent Skills front matter, the name, the size cap) decide.
 */
import type { SkillEditOutcome, SkillEditSink, SkillProposal } from '../llm/post-turn-review.js';
import type { SkillLibrary } from './library.js';

/** The command that saves a skill: `/skills save <name>`, the skill's SKILL.md text on the following lines. */
const SAVE_SKILL_VERB = 'save';

function saveSkillCommand(name: string, content: string): string {
  return `/skills ${SAVE_SKILL_VERB} ${name}\n${content}`;
}

export class StoredSkillEdits implements SkillEditSink {
  constructor(private readonly library: SkillLibrary) {}

  async propose(profile: string, edit: SkillProposal, apply: 'auto' | 'offer'): Promise<SkillEditOutcome> {
    const why = edit.reason ? `: ${edit.reason}` : '';
    if (apply === 'offer') {
      return {
        line: `📚 Skill idea "${edit.name}"${why}.`,
        choice: { label: `📚 Save skill ${edit.name}`.slice(0, 60), text: saveSkillCommand(edit.name, edit.content) },
      };
    }
    try {
      const { created } = await this.library.writeSkill(profile, edit.name, edit.content);
      return { line: `📚 Skill "${edit.name}" ${created ? 'saved' : 'updated'}${why}.` };
    } catch (err) {
      return { line: `📚 Skill idea "${edit.name}" not saved: ${(err as Error).message}` };
    }
  }
}
