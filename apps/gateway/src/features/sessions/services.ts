/**
 * The conversation-control services one gateway process shares: pairing, the reset policy, per-session
 * counters, per-session models and the progress settings. Built once per process in roles/services-part.ts (tests
 * build them with testConversationServices, test-support.ts); the router and the commands (ingress) and the turn
 * runner (worker) take what they need from here.
 */
import { ContextWindows, LEARNT_WINDOW_TTL_MS, StoredWindowBook, type SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../../support/config/load.js';
import { ProviderCatalog } from '../../support/config/providers.js';
import { progressSettings, type ProgressSettings } from '../../support/config/progress.js';
import { BackgroundTasks } from './background-tasks.js';
import { PairingService } from '../pairing/index.js';
import { SessionCounters } from './counters.js';
import { SessionModels, SideTaskModels, type SideTaskOptions } from './models.js';
import { ActivitySeen, resetPolicyFrom, type ResetPolicy } from './reset-policy.js';
import { ReasoningDisplay } from './reasoning-display.js';
import { VoiceReplies } from './voice-replies.js';
import { ProfileTable } from '../profiles/table.js';
import { budgetGuardFor, type BudgetGuard } from '../budgets/guard.js';
import { PriceTable } from '../budgets/prices.js';
import type { CallSpend, SpendPricing } from '../budgets/meter.js';
import { createLogger, type Logger } from '../../support/logger.js';
import type { SkillLibrary } from '../skills/library.js';
import type { SessionPrompts } from '../prompt/session-prompts.js';
import { openKnowledge } from '../prompt/knowledge.js';

/** How often a turn reads the context windows other workers learnt (sessions share them through the store). */
const WINDOWS_REFRESH_MS = 5_000;

export interface ConversationServices {
  readonly config: HeraldConfig;
  readonly pairing: PairingService;
  readonly counters: SessionCounters;
  readonly resetPolicy: ResetPolicy;
  /** When each key's session was last seen active: the HTTP API's reset check reads the store only when that is not current. */
  readonly activitySeen: ActivitySeen;
  readonly progress: ProgressSettings;
  readonly models: SessionModels;
  /** Context windows providers named in errors, shared by every worker through the store. */
  readonly windows: ContextWindows;
  /** The models of side tasks: summaries, the memory flush, image descriptions (features/sessions/models.ts SideTaskModels). */
  readonly sideTasks: SideTaskModels;
  /** `/voice on|off` per conversation. */
  readonly voice: VoiceReplies;
  /** `/reasoning on|off` per conversation. */
  readonly reasoning: ReasoningDisplay;
  /** Work started behind a reply (the /new memory flush); stopping the process waits for it. */
  readonly background: BackgroundTasks;
  /** The agent profiles and their routes. */
  readonly profiles: ProfileTable;
  /** Spend caps: what is spent, what is left, refusals and notices (features/budgets/guard.ts). */
  readonly budgets: BudgetGuard;
  /** The price table and the per-call spend report, for calls outside a turn (the memory flush of /new and resets). */
  readonly pricing: SpendPricing;
  /** The prompt builder: a session's system prompt from its layers, and how it was built (features/prompt). */
  readonly prompts: SessionPrompts;
  /** Every profile's skills: the store's (agent-written) and the folders' (features/skills). */
  readonly skills: SkillLibrary;
}

/** The services on the session store's database. */
export function openConversationServices(
  config: HeraldConfig,
  store: SessionStore,
  background = new BackgroundTasks(),
  catalog: ProviderCatalog = new ProviderCatalog(config),
  sideTaskOptions: SideTaskOptions = {},
  onStoreError?: (err: unknown) => void,
  /** Told of each priced call outside a turn (metrics); the turns' own go through their team controls. */
  onSpend: (profile: string, call: CallSpend) => void = () => undefined,
  /** Where skill folders that do not follow the format and cut context files are reported. */
  log: Logger = createLogger({ level: 'silent' }),
): ConversationServices {
  const pairing = new PairingService(store.sql);
  const { prompts, skills } = openKnowledge(config, store.sql, log.child({ component: 'knowledge' }));
  const counters = new SessionCounters(store);
  const models = new SessionModels(config, catalog);
  return {
    config,
    pairing,
    counters,
    resetPolicy: resetPolicyFrom(config),
    activitySeen: new ActivitySeen(),
    progress: progressSettings(config),
    models,
    // Turns look at what other workers learnt at most every few seconds (not one store read per message).
    windows: new ContextWindows({ book: new StoredWindowBook(store.sql, LEARNT_WINDOW_TTL_MS), onBookError: onStoreError, minRefreshMs: WINDOWS_REFRESH_MS }),
    sideTasks: new SideTaskModels(config, models, catalog, sideTaskOptions),
    voice: new VoiceReplies(store.sql),
    reasoning: new ReasoningDisplay(store.sql),
    background,
    profiles: new ProfileTable(config),
    budgets: budgetGuardFor(config, store.sql),
    pricing: { prices: new PriceTable(config.prices), onCall: onSpend },
    prompts,
    skills,
  };
}
