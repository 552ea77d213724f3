/** The prompt builder: the layers in their fixed order, the same bytes for the same inputs, context files capped with a warning, personalities. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SESSION_HEADING } from '@herald/agent-core';
import { afterAll, describe, expect, it } from 'vitest';
import { useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { createLogger } from '../../support/logger.js';
import { SkillLibrary } from '../skills/library.js';
import { SkillStore } from '../skills/store.js';
import { Personalities } from './personalities.js';
import { SessionPrompts, type PromptProfile, type PromptRequest } from './session-prompts.js';

const root = mkdtempSync(join(tmpdir(), 'herald-prompt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const log = createLogger({ level: 'silent' });
mkdirSync(join(root, 'context'));
writeFileSync(join(root, 'AGENTS.md'), 'Project: Herald. Use British spelling.');
writeFileSync(join(root, 'context', 'b-soul.md'), 'You value honesty.');
writeFileSync(join(root, 'context', 'a-team.md'), 'The team is in Berlin.');
writeFileSync(join(root, 'context', 'ignored.txt'), 'not markdown');
mkdirSync(join(root, 'skills', 'deploy'), { recursive: true });
writeFileSync(join(root, 'skills', 'deploy', 'SKILL.md'), '---\nname: deploy\ndescription: Deploy the app.\n---\nSteps.\n');

describe('SessionPrompts', () => {
  const temp = useTempStores('sqlite');

  async function builder(maxChars = 10_000): Promise<SessionPrompts> {
    const { sql } = await temp.open();
    const skills = new SkillLibrary(new SkillStore(sql), { sharedDir: join(root, 'skills'), maxChars: 5000, log });
    return new SessionPrompts(sql, {
      personalities: new Personalities({ butler: 'You are a discreet butler.' }),
      skills,
      contextMaxChars: maxChars,
      timeZone: 'UTC',
      schedulesPerUser: 0,
      log,
    });
  }
  const profile: PromptProfile = {
    name: 'default',
    systemPrompt: 'You are Herald.',
    personality: 'butler',
    contextFiles: [join(root, 'AGENTS.md'), join(root, 'context')],
    skillsDir: undefined,
  };
  const request = (over: Partial<PromptRequest> = {}): PromptRequest => ({
    profile,
    platform: 'telegram',
    chatType: 'dm',
    startedAt: new Date(Date.UTC(2026, 5, 1, 9, 30)),
    timeZone: 'UTC',
    toolNames: ['memory', 'skill_view', 'current_time'],
    ...over,
  });

  it('puts the layers in order — identity, profile, context files, skills index, platform, tools — then the session section', async () => {
    const built = await (await builder()).build(request());
    const at = (s: string) => built.text.indexOf(s);
    const marks = [
      'You are a discreet butler.',
      'You are Herald.',
      '# Context files\n## AGENTS.md\nProject: Herald.',
      '## a-team.md\nThe team is in Berlin.',
      '## b-soul.md\nYou value honesty.',
      '# Skills\nLoad a skill with skill_view before a task it fits:\n- deploy: Deploy the app.',
      '# Formatting\nYou are answering in Telegram.',
      '# Tools\n- memory:',
      '- current_time:',
      '- skill_view:',
      SESSION_HEADING,
    ];
    for (const m of marks) expect(at(m), m).toBeGreaterThanOrEqual(0);
    expect(marks.map(at)).toEqual([...marks.map(at)].sort((a, b) => a - b));
    expect(built.text).not.toContain('not markdown');
    expect(built.layers.map((l) => l.name)).toEqual(['identity', 'profile', 'context', 'skills', 'platform', 'tools']);
    expect(built.personality).toBe('butler');
  });

  it('gives the same bytes for the same inputs (no time of day, nothing per turn)', async () => {
    const b = await builder();
    const one = await b.build(request());
    const two = await b.build(request({ startedAt: new Date(Date.UTC(2026, 5, 1, 17, 45)) }));
    expect(two.text).toBe(one.text);
  });

  it('cuts context files over the cap, saying so in the prompt and in the warnings', async () => {
    const built = await (await builder(50)).build(request());
    expect(built.warnings.some((w) => /context file .*cut: \d+ of \d+ characters fit \(HERALD_CONTEXT_FILES_MAX_CHARS=50\)/.test(w))).toBe(true);
    expect(built.text).toMatch(/\[… context file .* cut: \d+ of \d+ characters fit/);
    expect(built.text).not.toContain('You value honesty.');
  });

  it('switches personality per session, none drops the identity layer, an unknown one is a warning', async () => {
    const b = await builder();
    expect((await b.build(request({ personality: 'pirate' }))).text).toMatch(/^You are a cheerful pirate captain/);
    const none = await b.build(request({ personality: 'none' }));
    expect(none.text.startsWith('You are Herald.')).toBe(true);
    expect(none.personality).toBeNull();
    const unknown = await b.build(request({ personality: 'nobody' }));
    expect(unknown.warnings).toContain('personality "nobody" is not defined; the session has none');
  });

  it('records how a session’s prompt was built', async () => {
    const b = await builder();
    const built = await b.build(request({ platform: 'slack', toolNames: [] }));
    await b.record('s1', built);
    const rec = await b.recordOf('s1');
    expect(rec?.personality).toBe('butler');
    expect(rec?.layers.map((l) => l.name)).toEqual(['identity', 'profile', 'context', 'platform']);
    expect(built.text).toContain('# Formatting\nYou are answering in Slack.');
    expect(await b.recordOf('missing')).toBeNull();
  });
});
