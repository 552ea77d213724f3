/**
 * The turn runner a worker process runs its jobs with: the agent, each profile's agent and tools, the team
 * controls, files and voice replies, the media readers (turn/pipeline.ts assembles the stages from these).
 */
import type { Redis } from 'ioredis';
import type { SessionStore } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';
import type { Logger } from '../support/logger.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';
import { ProfileRuntimes } from '../turn/profile-runtimes.js';
import { createTeamControls, PrepGate } from '../turn/team-controls.js';
import { createTurnRunner } from '../turn/pipeline.js';
import type { TurnRunner } from '../queue/turn-context.js';
import { buildAgentRuntime, type AgentRuntime } from '../turn/agent-runtime.js';
import { createTurnTools } from '../turn/tools.js';
import { ApprovalGate } from '../features/approvals/gate.js';
import { openApprovalDesk } from '../features/approvals/desk.js';
import { argumentMasker } from '../features/approvals/mask.js';
import { configSecrets } from '../support/config/load.js';
import { instrumentAgent, turnMetrics } from '../turn/instrument.js';
import type { OutboundServices } from '../out/services.js';
import { createMediaServices, type MediaServices } from '../features/media/services.js';
import { createCodeTools, type CodeTools, type SandboxDetection } from '../features/sandbox/index.js';
import type { McpHub } from '../features/mcp/hub.js';
import type { ScheduleService } from '../features/schedules/service.js';
import { apiRelays } from '../edges/api/index.js';
import { createFilesRegistry } from './platforms.js';
import { ButtonStore } from '../features/interactions/buttons.js';
import { StoredSkillEdits } from '../features/skills/review-edits.js';
import type { SharedServices } from './services-part.js';

export interface TurnRunnerParts {
  config: HeraldConfig;
  log: Logger;
  redis: Redis;
  store: SessionStore;
  shared: SharedServices;
  agent: AgentRuntime | null;
  outbound: OutboundServices;
  mcp: McpHub | null;
  schedules: ScheduleService;
  /** The sandbox backend found at start-up (null: execute_code is not offered). */
  sandbox: SandboxDetection | null;
}

export function buildTurnRunner(parts: TurnRunnerParts): TurnRunner {
  const { config, log, redis, store, shared, outbound } = parts;
  const { conversation, metrics, egress, replies } = shared;
  const media = createMediaServices(config, createFilesRegistry(config, log), conversation.sideTasks.describer());
  return createTurnRunner({
    store,
    countTurn: turnMetrics({ metrics, store }),
    egress,
    conversation,
    profiles: profileRuntimes(parts, codeTools(parts, media)),
    // Cost per call, budgets, the profiles' concurrent-turn limits and the global LLM cap.
    controls: createTeamControls({ config, budgets: conversation.budgets, pricing: conversation.pricing, redis, profiles: conversation.profiles }),
    prepGate: new PrepGate(config.turnPrepLimit),
    onPossibleDuplicate: (platform) => metrics.possibleDuplicateReplies.inc({ platform }),
    outbound,
    media,
    relays: apiRelays(replies, (err) => log.warn({ err }, 'streaming to an API request failed')),
    review: { buttons: new ButtonStore(redis, config.redisPrefix), skillEdits: new StoredSkillEdits(conversation.skills) },
  });
}

/** execute_code's per-turn factory: the files it sends go by send_file's limits, those it reads by the media limits. */
function codeTools({ config, sandbox, outbound }: TurnRunnerParts, media: MediaServices): CodeTools | null {
  const inputLimits = { maxFileBytes: media.limits.maxFileBytes, maxTotalBytes: media.limits.maxMessageBytes };
  return createCodeTools({ detection: sandbox, config, fileLimits: outbound.limits.file, inputLimits, files: media.files });
}

/**
 * Each profile's agent (model, prompt, budget) and tools (toolsets, MCP servers, notes), built now: a profile
 * whose model cannot be used stops the start, as HERALD_MODEL does.
 */
function profileRuntimes({ config, log, redis, store, shared, agent, outbound, mcp, schedules }: TurnRunnerParts, code: CodeTools | null): ProfileRuntimes {
  const { conversation, providers, metrics, llmLog } = shared;
  const toolsLog = log.child({ component: 'tools' });
  // One gate per process: the hooks of every profile's turns (approvals per the profile's policy, the tool-call audit).
  const approvals = new ApprovalGate({
    desk: openApprovalDesk(redis, config.redisPrefix, store.sql),
    timeoutMs: config.approvalTimeoutS * 1000,
    admins: config.adminUsers,
    mask: argumentMasker(configSecrets(config)),
    log: toolsLog,
  });
  return new ProfileRuntimes(conversation.profiles, (profile) => {
    const own = profile.name === DEFAULT_PROFILE ? agent : instrumentAgent(buildAgentRuntime(config, providers, profile), metrics, llmLog);
    const files = { limits: outbound.limits.file, perTurn: outbound.limits.perTurn };
    const sideProvider = conversation.sideTasks.forSession(profile.name === DEFAULT_PROFILE ? null : (profile.model ?? null), 'search');
    const tools = createTurnTools({
      config: { ...config, toolsets: profile.toolsets },
      store,
      agent: own,
      sideProvider,
      redis,
      mcp,
      schedules,
      log: toolsLog,
      files,
      profile,
      code,
      skills: conversation.skills,
      approvals,
    });
    return { profile, agent: own, tools };
  });
}
