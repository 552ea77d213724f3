/**
 * The agent's skill tools, built once per profile: `skill_view` loads a skill's body (or one of its files) named in
 * the skills index of the system prompt; `skill_manage` (off unless the profile allows it) creates, replaces or
 * deletes the profile's own skills in the store. Errors come back to the model as text it can act on.
 */
import type { Tool } from '@herald/agent-core';
import type { SkillLibrary, SkillOwner } from './library.js';
import { SKILL_DESCRIPTION_MAX, SKILL_NAME_MAX } from './skill-file.js';

export const SKILL_VIEW_TOOL = 'skill_view';
export const SKILL_MANAGE_TOOL = 'skill_manage';

interface ViewArgs extends Record<string, unknown> {
  name?: string;
  file?: string;
}

interface ManageArgs extends Record<string, unknown> {
  action?: 'write' | 'delete';
  name?: string;
  content?: string;
}

export function createSkillViewTool(library: SkillLibrary, owner: SkillOwner): Tool {
  const tool: Tool<ViewArgs> = {
    name: SKILL_VIEW_TOOL,
    description:
      'Load a skill listed in the skills index of your instructions: its full instructions (SKILL.md), or with file one of the files beside it. Load a skill before doing the task it describes.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The skill name from the index' },
        file: { type: 'string', description: 'A file of the skill, relative to its folder (e.g. reference/api.md); omit for SKILL.md' },
      },
      required: ['name'],
    },
    readOnly: true,
    async execute(args) {
      if (typeof args.name !== 'string' || args.name.trim() === '') return 'Error: name the skill (from the skills index).';
      try {
        return await library.view(owner, args.name.trim(), typeof args.file === 'string' ? args.file : undefined);
      } catch (err) {
        return `Error: ${(err as Error).message}`;
      }
    },
  };
  return tool as Tool;
}

export function createSkillManageTool(library: SkillLibrary, owner: SkillOwner): Tool {
  const tool: Tool<ManageArgs> = {
    name: SKILL_MANAGE_TOOL,
    description: [
      'Save what you learnt as a skill for later conversations, or replace or delete one you wrote.',
      'action "write": content is the whole SKILL.md — YAML front matter between "---" lines with name (the same as the name',
      `argument: lowercase letters, digits, hyphens, at most ${SKILL_NAME_MAX}) and description (what it is for and when to use it, at`,
      `most ${SKILL_DESCRIPTION_MAX} characters), then Markdown instructions. New skills are listed in the index of later conversations.`,
    ].join(' '),
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: ['write', 'delete'], description: 'Default write' },
        name: { type: 'string', description: 'The skill name' },
        content: { type: 'string', description: 'write: the whole SKILL.md' },
      },
      required: ['name'],
    },
    readOnly: false,
    async execute(args) {
      const name = typeof args.name === 'string' ? args.name.trim() : '';
      if (name === '') return 'Error: name the skill.';
      try {
        if (args.action === 'delete') {
          return (await library.deleteSkill(owner.name, name))
            ? `Deleted the skill "${name}".`
            : `Error: you wrote no skill "${name}" (skills from folders are read-only).`;
        }
        if (typeof args.content !== 'string') return 'Error: write needs content (the whole SKILL.md).';
        const { created } = await library.writeSkill(owner.name, name, args.content);
        return `${created ? 'Created' : 'Replaced'} the skill "${name}"; later conversations list it in their skills index.`;
      } catch (err) {
        return `Error: ${(err as Error).message}`;
      }
    },
  };
  return tool as Tool;
}
