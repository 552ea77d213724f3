/**
 * The conversation-control services one gateway process shares: pairing, the reset policy, per-session
 * counters, per-session models and the progress settings. Built once in app.ts; the router and the commands
 * (ingress) and the turn runner (worker) take what they need from here.
 */
import type { SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../config/load.js';
import { ProviderCatalog } from '../config/providers.js';
import { progressSettings, type ProgressSettings } from '../config/progress.js';
import { BackgroundTasks } from './background-tasks.js';
import { PairingService } from '../pairing/index.js';
import { SessionCounters } from './counters.js';
import { SessionModels } from './models.js';
import { resetPolicyFrom, type ResetPolicy } from './reset-policy.js';
import { ReasoningDisplay } from './reasoning-display.js';
import { VoiceReplies } from './voice-replies.js';

export interface ConversationServices {
  readonly config: HeraldConfig;
  readonly pairing: PairingService;
  readonly counters: SessionCounters;
  readonly resetPolicy: ResetPolicy;
  readonly progress: ProgressSettings;
  readonly models: SessionModels;
  /** `/voice on|off` per conversation. */
  readonly voice: VoiceReplies;
  /** `/reasoning on|off` per conversation. */
  readonly reasoning: ReasoningDisplay;
  /** Work started behind a reply (the /new memory flush); stopping the process waits for it. */
  readonly background: BackgroundTasks;
}

/** The services on the session store's database. */
export function openConversationServices(
  config: HeraldConfig,
  store: SessionStore,
  background = new BackgroundTasks(),
  catalog: ProviderCatalog = new ProviderCatalog(config),
): ConversationServices {
  const pairing = new PairingService(store.sql);
  const counters = new SessionCounters(store);
  return {
    config,
    pairing,
    counters,
    resetPolicy: resetPolicyFrom(config),
    progress: progressSettings(config),
    models: new SessionModels(config, catalog),
    voice: new VoiceReplies(store.sql),
    reasoning: new ReasoningDisplay(store.sql),
    background,
  };
}
