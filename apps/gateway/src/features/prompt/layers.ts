/**
 * The system prompt's layers, in this fixed order (docs/prompt.md):
 *   1. identity  — the personality preset (who the agent is, how it talks)
 *   2. profile   — the profile's prompt (HERALD_SYSTEM_PROMPT, or the profile's system_prompt)
 *   3. context   — the profile's context files (AGENTS.md, SOUL.md, …)
 *   4. skills    — the skills index: name and description of each skill (bodies are loaded with skill_view)
 *   5. platform  — the formatting rules of the chat the session answers in
 *   6. tools     — guidance for the tools offered
 * and after them the session section (agent-core's buildSessionSystemPrompt: platform, chat type, start date).
 * Nothing in a layer changes per turn: the prompt is built once at session start and stored with the session, so a
 * provider's prompt cache keeps hitting and a file changed mid-session changes only the sessions that start later.
 */

const LAYER_ORDER = ['identity', 'profile', 'context', 'skills', 'platform', 'tools'] as const;
type LayerName = (typeof LAYER_ORDER)[number];

/** The heading a layer starts with in the prompt; the first two are the operator's own words, without one. */
const HEADINGS: Readonly<Record<LayerName, string | null>> = {
  identity: null,
  profile: null,
  context: '# Context files',
  skills: '# Skills',
  platform: '# Formatting',
  tools: '# Tools',
};

/** What went into one layer, for /prompt and the admin API. */
export interface LayerInfo {
  name: LayerName;
  /** Characters of the layer in the prompt. */
  chars: number;
  /** Where it came from: the personality, the files, the skill names, the platform. */
  detail: string;
}

export type LayerTexts = Partial<Record<LayerName, { text: string | null; detail: string }>>;

/** The static part of the prompt (all layers, in order) and what each layer held; absent or empty layers are left out. */
export function composeLayers(texts: LayerTexts): { text: string; layers: LayerInfo[] } {
  const parts: string[] = [];
  const layers: LayerInfo[] = [];
  for (const name of LAYER_ORDER) {
    const layer = texts[name];
    const body = layer?.text?.trim();
    if (!layer || !body) continue;
    const heading = HEADINGS[name];
    const text = heading ? `${heading}\n${body}` : body;
    parts.push(text);
    layers.push({ name, chars: text.length, detail: layer.detail });
  }
  return { text: parts.join('\n\n'), layers };
}
