/** Skills: the Agent Skills format, the three sources and their order, path-safe files, and the agent's own skills in the store on SQLite and PostgreSQL. */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STORE_BACKENDS, useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { createLogger } from '../../support/logger.js';
import { SkillLibrary } from './library.js';
import { SkillFormatError, parseSkill } from './skill-file.js';
import { SkillStore } from './store.js';
import { createSkillManageTool, createSkillViewTool } from './tools.js';

const root = mkdtempSync(join(tmpdir(), 'herald-skills-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const log = createLogger({ level: 'silent' });

function skill(dir: string, name: string, description: string, body: string, files: Record<string, string> = {}): void {
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(join(dir, name, 'SKILL.md'), `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`);
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, f, '..'), { recursive: true });
    writeFileSync(join(dir, name, f), text);
  }
}

const md = (name: string, description: string, body = 'Steps.') => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

describe('SKILL.md', () => {
  it('takes name and description from the front matter and keeps the body', () => {
    expect(parseSkill(md('pdf-forms', 'Fill PDF forms.', '# Steps\n1. open'), 'pdf-forms')).toEqual({
      name: 'pdf-forms',
      description: 'Fill PDF forms.',
      body: '# Steps\n1. open\n',
    });
  });

  it('refuses what the format does not allow, saying what to fix', () => {
    expect(() => parseSkill('# no front matter')).toThrow(/YAML front matter/);
    expect(() => parseSkill(md('Bad_Name', 'x'))).toThrow(/lowercase letters/);
    expect(() => parseSkill(md('a--b', 'x'))).toThrow(/single hyphens/);
    expect(() => parseSkill(md('ok', 'x'), 'other')).toThrow(/must equal its folder's name "other"/);
    expect(() => parseSkill('---\nname: ok\n---\nbody')).toThrow(/needs a description/);
    expect(() => parseSkill(md('ok', 'x'.repeat(1025)))).toThrow(/at most 1024/);
    expect(() => parseSkill('---\nname: [unclosed\n---\n')).toThrow(SkillFormatError);
  });
});

describe.each(STORE_BACKENDS)('SkillLibrary on %s', (backend) => {
  const temp = useTempStores(backend);
  const shared = join(root, `${backend}-shared`);
  const own = join(root, `${backend}-own`);
  skill(shared, 'deploy', 'Deploy the app (shared).', 'Shared deploy steps.', { 'scripts/run.sh': 'echo deploy', 'ref/notes.md': 'notes' });
  skill(shared, 'greet', 'Greet people.', 'Say hello.');
  skill(own, 'deploy', 'Deploy the app (profile).', 'Profile deploy steps.');
  mkdirSync(join(shared, 'broken'), { recursive: true });
  writeFileSync(join(shared, 'broken', 'SKILL.md'), 'no front matter');
  writeFileSync(join(root, `${backend}-secret.txt`), 'secret');
  symlinkSync(join(root, `${backend}-secret.txt`), join(shared, 'greet', 'leak.txt'));

  async function library(): Promise<SkillLibrary> {
    const store = await temp.open();
    return new SkillLibrary(new SkillStore(store.sql), { sharedDir: shared, maxChars: 2000, log });
  }

  it('lists the agent’s, the profile’s and the shared skills, the first source of a name winning; a broken folder is skipped', async () => {
    const lib = await library();
    await lib.writeSkill('support', 'greet', md('greet', 'Greet customers politely.'));
    expect(await lib.index({ name: 'support', skillsDir: own })).toEqual([
      { name: 'deploy', description: 'Deploy the app (profile).', source: 'profile' },
      { name: 'greet', description: 'Greet customers politely.', source: 'agent' },
    ]);
    // Another profile does not see support's own skills.
    expect((await lib.index({ name: 'default' })).map((s) => `${s.name}:${s.source}`)).toEqual(['deploy:shared', 'greet:shared']);
  });

  it('skill_view loads a body with its file list, or one file inside the skill folder only', async () => {
    const lib = await library();
    const view = createSkillViewTool(lib, { name: 'default' });
    const ctx = {} as never;
    expect(await view.execute({ name: 'deploy' }, ctx)).toBe(
      'Shared deploy steps.\n\nFiles of this skill (skill_view with file): ref/notes.md, scripts/run.sh',
    );
    expect(await view.execute({ name: 'deploy', file: 'scripts/run.sh' }, ctx)).toBe('echo deploy');
    expect(await view.execute({ name: 'deploy', file: '../greet/SKILL.md' }, ctx)).toMatch(/^Error: .* not a path inside the skill/);
    expect(await view.execute({ name: 'deploy', file: '/etc/passwd' }, ctx)).toMatch(/^Error: .* not a path inside the skill/);
    expect(await view.execute({ name: 'greet', file: 'leak.txt' }, ctx)).toMatch(/^Error: .* not a path inside the skill/);
    expect(await view.execute({ name: 'nope' }, ctx)).toMatch(/^Error: no skill "nope"/);
  });

  it('skill_manage writes validated, size-capped skills to the store; replaces and deletes its own only', async () => {
    const lib = await library();
    const manage = createSkillManageTool(lib, { name: 'ops' });
    const view = createSkillViewTool(lib, { name: 'ops' });
    const ctx = {} as never;
    expect(await manage.execute({ name: 'restart-db', content: md('restart-db', 'Restart the database safely.', '1. drain\n2. restart') }, ctx)).toMatch(
      /^Created/,
    );
    expect(await view.execute({ name: 'restart-db' }, ctx)).toBe('1. drain\n2. restart');
    expect(await manage.execute({ name: 'restart-db', content: md('restart-db', 'Restart it.', 'v2') }, ctx)).toMatch(/^Replaced/);
    expect(await view.execute({ name: 'restart-db' }, ctx)).toBe('v2');
    expect(await manage.execute({ name: 'other', content: md('restart-db', 'x') }, ctx)).toMatch(/must equal its folder's name "other"/);
    expect(await manage.execute({ name: '../escape', content: md('x', 'x') }, ctx)).toMatch(/^Error: a skill name is lowercase/);
    expect(await manage.execute({ name: 'big', content: md('big', 'x', 'y'.repeat(3000)) }, ctx)).toMatch(/at most 2000/);
    expect(await manage.execute({ name: 'greet', action: 'delete' }, ctx)).toMatch(/read-only/);
    expect(await manage.execute({ name: 'restart-db', action: 'delete' }, ctx)).toMatch(/^Deleted/);
    expect((await lib.index({ name: 'ops' })).map((s) => s.name)).toEqual(['deploy', 'greet']);
  });
});
