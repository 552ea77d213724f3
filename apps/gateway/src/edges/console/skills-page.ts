/**
 * The skills page: every profile's skills index (the agent's own from the store, the profile's folder, the shared
 * folder), and one skill's instructions as the agent's skill_view loads them.
 */
import type { Knowledge } from '../../features/prompt/knowledge.js';
import type { Profile } from '../../features/profiles/table.js';
import { CONSOLE_PATH } from './auth.js';
import { html, type Html } from './html.js';
import { tableWrap } from './layout.js';

const SOURCES: Readonly<Record<string, string>> = { agent: 'written by the agent', profile: "the profile's folder", shared: 'the shared folder' };

const skillHref = (profile: string, name: string): string => `${CONSOLE_PATH}/skills/${encodeURIComponent(profile)}/${encodeURIComponent(name)}`;

export async function skillsBody(knowledge: Knowledge, profiles: readonly Profile[]): Promise<Html> {
  const sections = await Promise.all(
    profiles.map(async (p) => {
      const skills = await knowledge.skills.index({ name: p.name, skillsDir: p.skillsDir });
      const rows = skills.map(
        (s) => html`<tr><th scope="row"><a href="${skillHref(p.name, s.name)}">${s.name}</a></th><td>${s.description}</td><td>${SOURCES[s.source]}</td></tr>`,
      );
      return html`<section aria-labelledby="h-skills-${p.name}">
  <h2 id="h-skills-${p.name}">Profile ${p.name}${p.skillManage ? ' (may write skills)' : ''}</h2>
  ${tableWrap(`Skills of profile ${p.name}`, ['Skill', 'Description', 'Source'], rows, 'No skills: set HERALD_SKILLS_DIR or the profile’s skills_dir, or allow skill_manage.')}
</section>`;
    }),
  );
  return html`<h1>Skills</h1>${sections}`;
}

export function skillBody(profile: string, name: string, body: string): Html {
  return html`<h1>Skill ${name}</h1>
<p><a href="${CONSOLE_PATH}/skills">All skills</a> · profile ${profile}</p>
<pre>${body}</pre>`;
}
