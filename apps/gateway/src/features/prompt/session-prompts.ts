/**
 * The prompt builder: a session's system prompt from its layers (layers.ts), built once when the session starts
 * and stored with it (sessions.system_prompt), with a record of its layers (session_prompts, migration 51) for
 * /prompt and the admin API. The build reads the profile's context files and skills index at that moment; later
 * changes reach the sessions that start after them.
 */
import { buildSessionSystemPrompt, recordSessionPrompt, type Session, type SessionStore, type Sql } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';
import type { SkillLibrary } from '../skills/library.js';
import { SKILL_VIEW_TOOL } from '../skills/tools.js';
import { readContextFiles } from './context-files.js';
import { composeLayers, type LayerInfo } from './layers.js';
import { NO_PERSONALITY, type Personalities } from './personalities.js';
import { platformHint } from './platform-hints.js';
import { toolGuidance } from './tool-guidance.js';
import { plannedToolNames } from './tool-names.js';
import type { Profile } from '../profiles/table.js';

/** What the builder needs of a profile (features/profiles/table.ts has it all). */
/** How far up a lineage the record of a taken-over prompt is looked for. */
const MAX_LINEAGE_HOPS = 50;

export interface PromptProfile {
  name: string;
  systemPrompt: string;
  /** The default personality; undefined: none. */
  personality: string | undefined;
  contextFiles: readonly string[];
  skillsDir: string | undefined;
}

export interface PromptRequest {
  profile: PromptProfile;
  platform: string;
  chatType?: string;
  startedAt: Date;
  timeZone: string;
  /** The tools the session offers (their guidance lines, and whether a skills index is worth listing). */
  toolNames: readonly string[];
  /** A personality chosen for this session (/personality); undefined: the profile's default; `none`: no identity. */
  personality?: string;
}

export interface BuiltPrompt {
  text: string;
  personality: string | null;
  layers: LayerInfo[];
  warnings: string[];
}

export interface PromptRecord {
  personality: string | null;
  layers: LayerInfo[];
}

export interface SessionPromptsOptions {
  personalities: Personalities;
  skills: SkillLibrary;
  /** HERALD_CONTEXT_FILES_MAX_CHARS. */
  contextMaxChars: number;
  /** HERALD_TIMEZONE: the zone of the session section's start date. */
  timeZone: string;
  /** HERALD_SCHEDULES_PER_USER: whether the schedule tool is offered (0: not). */
  schedulesPerUser: number;
  log: Logger;
}

export class SessionPrompts {
  constructor(
    private readonly sql: Sql,
    readonly options: SessionPromptsOptions,
  ) {}

  get personalities(): Personalities {
    return this.options.personalities;
  }

  async build(req: PromptRequest): Promise<BuiltPrompt> {
    const { profile } = req;
    const warnings: string[] = [];
    const personality = this.personalityOf(req, warnings);
    const context = await readContextFiles(profile.contextFiles, this.options.contextMaxChars);
    warnings.push(...context.warnings);
    const skills = req.toolNames.includes(SKILL_VIEW_TOOL) ? await this.options.skills.index(profile) : [];
    const { text, layers } = composeLayers({
      identity: { text: personality ? (this.personalities.text(personality) ?? null) : null, detail: `personality ${personality}` },
      profile: { text: profile.systemPrompt, detail: `profile ${profile.name}` },
      context: { text: context.text, detail: context.files.map((f) => (f.used < f.chars ? `${f.path} (cut: ${f.used}/${f.chars})` : f.path)).join(', ') },
      skills: {
        text:
          skills.length > 0 ? ['Load a skill with skill_view before a task it fits:', ...skills.map((s) => `- ${s.name}: ${s.description}`)].join('\n') : null,
        detail: skills.map((s) => `${s.name} (${s.source})`).join(', '),
      },
      platform: { text: platformHint(req.platform), detail: req.platform },
      tools: { text: toolGuidance(req.toolNames), detail: req.toolNames.join(', ') },
    });
    for (const w of warnings) this.options.log.warn({ profile: profile.name }, w);
    const full = buildSessionSystemPrompt(text, { platform: req.platform, chatType: req.chatType, startedAt: req.startedAt, timeZone: req.timeZone });
    return { text: full, personality, layers, warnings };
  }

  /**
   * The prompt of a session started outside a turn (a command, the HTTP API): the profile's tools worked out from
   * the settings (tool-names.ts), this moment as its start.
   */
  buildFor(profile: Profile, platform: string, chatType: string | undefined, personality?: string, startedAt = new Date()): Promise<BuiltPrompt> {
    const { skills, timeZone, schedulesPerUser } = this.options;
    return this.build({
      profile,
      platform,
      chatType,
      startedAt,
      timeZone,
      toolNames: plannedToolNames(profile, skills, schedulesPerUser),
      personality,
    });
  }

  /** Keeps how a session's prompt was built; a second record for the same session is ignored (a re-run turn). */
  async record(sessionId: string, built: BuiltPrompt): Promise<void> {
    await recordSessionPrompt(this.sql, sessionId, built);
  }

  /** How the session's prompt was built; null for a session from before the builder (or one made without a model). */
  async recordOf(sessionId: string): Promise<PromptRecord | null> {
    const row = await this.sql.get<{ personality: string | null; layers: string }>('SELECT personality, layers FROM session_prompts WHERE session_id = ?', [
      sessionId,
    ]);
    return row ? { personality: row.personality, layers: JSON.parse(row.layers) as LayerInfo[] } : null;
  }

  /**
   * How the session's prompt was built: its own record, or — for a segment that took its prompt over unchanged
   * (compression, /resume) — its nearest ancestor's with the same prompt. Null when none is known.
   */
  async recordFor(store: SessionStore, session: Session): Promise<PromptRecord | null> {
    let at: Session | null = session;
    for (let hops = 0; at && hops < MAX_LINEAGE_HOPS; hops++) {
      const found = await this.recordOf(at.id);
      if (found) return found;
      const parent: Session | null = at.parentSessionId ? await store.getSession(at.parentSessionId) : null;
      at = parent && parent.systemPrompt === session.systemPrompt ? parent : null;
    }
    return null;
  }

  /** The session's personality: the one asked for, else the profile's default; unknown names are warned about. */
  private personalityOf(req: PromptRequest, warnings: string[]): string | null {
    const name = req.personality ?? req.profile.personality;
    if (name === undefined || name === NO_PERSONALITY) return null;
    if (this.personalities.has(name)) return name;
    warnings.push(`personality "${name}" is not defined; the session has none`);
    return null;
  }
}
