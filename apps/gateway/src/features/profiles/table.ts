/**
 * The agent profiles of one gateway and the routing table that picks one per message. `default` is built from the
 * top-level settings; each named profile takes what it does not set from there. Routes are tried in order, the
 * first whose every condition matches wins; no match: HERALD_DEFAULT_PROFILE.
 */
import { DEFAULT_PROFILE, DEFAULT_PROFILE_KEY } from '../../support/config/profile-names.js';
import type { BUSY_MODES, ProfilesSetting, Route, TOOLSETS } from '../../support/config/profile-schema.js';

type BusyInputMode = (typeof BUSY_MODES)[number];
type Toolset = (typeof TOOLSETS)[number];

export interface Profile {
  name: string;
  /** `provider:model`; undefined when neither the profile nor HERALD_MODEL sets one. */
  model: string | undefined;
  fallbackModels: string[];
  systemPrompt: string;
  toolsets: Toolset[];
  busyInputMode: BusyInputMode;
  /** `profile`: notes and past sessions are this profile's own; `shared`: the default profile's. */
  memory: 'profile' | 'shared';
  maxIterations: number;
  /** Turns of this profile running at once across all workers (undefined: no limit). */
  maxConcurrentTurns: number | undefined;
  /** The review after a turn (turn/stages/review.ts). */
  review: ReviewSettings;
  /** The default personality (the prompt's identity layer); undefined: none. */
  personality: string | undefined;
  /** Context files or folders read at session start. */
  contextFiles: string[];
  /** The profile's own skills folder. */
  skillsDir: string | undefined;
  /** Whether the agent has skill_manage. */
  skillManage: boolean;
  /** Tool names or globs that need approval, and those exempt from it (features/approvals/policy.ts). */
  approvals: { tools: string[]; exempt: string[] };
}

interface ReviewSettings {
  enabled: boolean;
  /** Runs after every this many turns of a conversation. */
  everyTurns: number;
  /** auto: notes are saved at once; offer: the user is asked, with buttons. */
  apply: 'auto' | 'offer';
}

/** What a route can look at in a message. */
export interface RouteSubject {
  platform: string;
  account?: string;
  chatType?: string;
  chatId?: string;
  spaceId?: string;
  threadId?: string;
  userId?: string;
}

/** The settings profiles are made from (HeraldConfig has them all). */
export interface TeamSettings {
  model?: string;
  fallbackModels: string[];
  systemPrompt: string;
  toolsets: Toolset[];
  busyInputMode: BusyInputMode;
  maxIterations: number;
  personality?: string;
  contextFiles: string[];
  skillManage: boolean;
  approvalTools: string[];
  approvalExempt: string[];
  profiles: ProfilesSetting;
  routes: Route[];
  defaultProfile: string;
  /** HERALD_REVIEW…: off, every 5 turns, offer, when absent. */
  review?: boolean;
  reviewEveryTurns?: number;
  reviewApply?: 'auto' | 'offer';
}

export class ProfileTable {
  private readonly byName = new Map<string, Profile>();
  private readonly routes: readonly Route[];
  private readonly fallback: Profile;
  readonly defaultName: string;

  constructor(config: TeamSettings) {
    const base: Profile = {
      name: DEFAULT_PROFILE,
      model: config.model,
      fallbackModels: config.fallbackModels,
      systemPrompt: config.systemPrompt,
      toolsets: config.toolsets,
      busyInputMode: config.busyInputMode,
      memory: 'shared',
      maxIterations: config.maxIterations,
      maxConcurrentTurns: undefined,
      review: { enabled: config.review ?? false, everyTurns: config.reviewEveryTurns ?? 5, apply: config.reviewApply ?? 'offer' },
      personality: config.personality,
      contextFiles: config.contextFiles,
      skillsDir: undefined,
      skillManage: config.skillManage,
      approvals: { tools: config.approvalTools, exempt: config.approvalExempt },
    };
    this.byName.set(DEFAULT_PROFILE, base);
    for (const [name, p] of Object.entries(config.profiles)) {
      this.byName.set(name, {
        name,
        // A profile with a model of its own does not inherit the default's fallbacks (they may be another vendor's).
        model: p.model ?? base.model,
        fallbackModels: p.fallback_models ?? (p.model ? [] : base.fallbackModels),
        systemPrompt: p.system_prompt ?? base.systemPrompt,
        toolsets: p.toolsets ?? base.toolsets,
        busyInputMode: p.busy_input_mode ?? base.busyInputMode,
        memory: p.memory,
        maxIterations: p.max_iterations ?? base.maxIterations,
        maxConcurrentTurns: p.max_concurrent_turns,
        review: {
          enabled: p.review?.enabled ?? base.review.enabled,
          everyTurns: p.review?.every_turns ?? base.review.everyTurns,
          apply: p.review?.apply ?? base.review.apply,
        },
        personality: p.personality ?? base.personality,
        contextFiles: p.context_files ?? base.contextFiles,
        skillsDir: p.skills_dir,
        skillManage: p.skill_manage ?? base.skillManage,
        approvals: { tools: p.approval_tools ?? base.approvals.tools, exempt: p.approval_exempt ?? base.approvals.exempt },
      });
    }
    this.fallback = this.byName.get(DEFAULT_PROFILE) ?? base;
    this.routes = config.routes;
    this.defaultName = config.defaultProfile;
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  list(): Profile[] {
    return [...this.byName.values()];
  }

  /**
   * The profile by name. Absent or null (a payload or session row of the default profile) and unknown (a profile
   * since removed from the config) give the `default` profile.
   */
  get(name: string | null | undefined): Profile {
    return this.byName.get(name ?? DEFAULT_PROFILE) ?? this.fallback;
  }

  /** The profile that answers this message. */
  route(msg: RouteSubject): Profile {
    const hit = this.routes.find((r) => matches(r, msg));
    return this.get(hit?.profile ?? this.defaultName);
  }
}

function matches(r: Route, m: RouteSubject): boolean {
  return (
    (r.platform === undefined || r.platform === m.platform) &&
    (r.account === undefined || r.account === (m.account ?? 'default')) &&
    (r.chat_type === undefined || r.chat_type === m.chatType) &&
    oneOf(r.chat, m.chatId) &&
    oneOf(r.space, m.spaceId) &&
    oneOf(r.thread, m.threadId) &&
    oneOf(r.user, m.userId)
  );
}

function oneOf(wanted: string | string[] | undefined, actual: string | undefined): boolean {
  if (wanted === undefined) return true;
  if (actual === undefined) return false;
  return Array.isArray(wanted) ? wanted.includes(actual) : wanted === actual;
}

/** Whose notes a turn reads and writes: the person, and the profile unless it shares the default's memory. */
export function memoryKeyOf(profile: Profile, platform: string, userId: string): string {
  return profile.memory === 'shared' || profile.name === DEFAULT_PROFILE ? `${platform}:${userId}` : `profile:${profile.name}:${platform}:${userId}`;
}

/** Which sessions session_search may look in: the profile's own (undefined: the person's sessions in any profile). */
export function searchProfileOf(profile: Profile): string | undefined {
  return profile.memory === 'shared' ? undefined : profile.name;
}

/** The segment after `agent:` in a session key: the profile's name, `main` for the default profile (Hermes' agent). */
export function profileKeySegment(profile: string): string {
  return profile === DEFAULT_PROFILE ? DEFAULT_PROFILE_KEY : profile;
}
