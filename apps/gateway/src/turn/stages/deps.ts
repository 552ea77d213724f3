/**
 * What the stages of a turn are built from (turn/pipeline.ts assembles them; roles/turn-runner.ts provides these).
 */
import type { AgentEvent, SessionStore } from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import type { TurnPayload } from '../../queue/mailbox.js';
import type { ConversationServices } from '../../features/sessions/services.js';
import type { OutboundServices } from '../../out/services.js';
import type { MediaServices } from '../../features/media/services.js';
import type { AroundTurn } from '../../queue/turn-context.js';
import type { ProfileRuntimes } from '../profile-runtimes.js';
import type { PrepGate, TeamControls } from '../team-controls.js';
import type { ButtonStore } from '../../features/interactions/buttons.js';
import type { SkillEditSink } from '../../features/llm/post-turn-review.js';

export interface TurnDeps {
  store: SessionStore;
  /** Egress by platform; built lazily so a worker needs no platform connection. */
  egress: (platform: string, account?: string) => PlatformEgress;
  /** Delivery backoff base; tests shrink it. */
  deliveryBaseDelayMs?: number;
  /** Progress and streaming settings, per-session models, counters (features/sessions/services.ts). */
  conversation: ConversationServices;
  /** Counts a reply a platform without duplicate protection may have got twice (support/ops/metrics.ts). */
  onPossibleDuplicate: (platform: string) => void;
  /** Files and voice replies the reply carries (out/services.ts). */
  outbound: OutboundServices;
  /** Fetching and reading the files users send (features/media/services.ts). */
  media: MediaServices;
  /**
   * The platforms that take the agent's events live (the HTTP API streams them to its client), each with the relay
   * for a message: asked only for a message of such a platform. Such a platform gets no typing, tool-progress or
   * streamed-edit display of its own.
   */
  relays: ReadonlyMap<string, (payload: TurnPayload) => (event: AgentEvent) => void>;
  /** Each agent profile's agent (null: no model configured; turns answer with a setup hint) and tools (turn/profile-runtimes.ts). */
  profiles: ProfileRuntimes;
  /** Cost per call, budgets, concurrency limits (turn/team-controls.ts). */
  controls: TeamControls;
  /** How many turns prepare their first model request at once (turn/team-controls.ts PrepGate). */
  prepGate: PrepGate;
  /** The review after a turn: its buttons and where skill edits go (turn/stages/review.ts). */
  review: ReviewServices;
  /** Counts and times a turn by its outcome (turn/instrument.ts turnMetrics): the body of the metrics policy. */
  countTurn: AroundTurn;
}

/** What the review after a turn needs besides the turn's own dependencies (turn/stages/review.ts). */
export interface ReviewServices {
  /** Offered notes' buttons (features/interactions/buttons.ts). */
  buttons: ButtonStore;
  /** Where proposed skill edits go (a log and a line to the user until the skills store takes them). */
  skillEdits: SkillEditSink;
}
