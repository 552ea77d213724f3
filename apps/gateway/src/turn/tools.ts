/**
 * Gateway glue for the agent's built-in tools: which tools a worker offers (HERALD_TOOLSETS, built once per
 * process with a log line for each tool left out), and each turn's part of the loop plan: the tools, an
 * iteration budget shared with subagents, the saved-notes block in front of the first message of a session, and
 * a clarify broker that asks questions in the chat (see clarify.ts).
 */
import { ButtonStore } from '../features/interactions/buttons.js';
import {
  CLARIFY_TOOL,
  DEFAULT_MAX_ITERATIONS,
  IterationBudget,
  MEMORY_TOOL,
  createBuiltinTools,
  resolveToolsets,
  flushMemory,
  prefetchMemoryBlock,
  stripMemoryMarker,
  type ChatMessage,
  type ClarifyChannel,
  type FlushMemoryResult,
  type FlushReason,
  type FileSink,
  type NotesRead,
  type Provider,
  type OutboundFileLimits,
  type Session,
  type SessionStore,
  type Tool,
  type ToolHook,
} from '@herald/agent-core';
import type { PlatformEgress } from '@herald/adapters';
import type { Redis } from 'ioredis';
import type { HeraldConfig } from '../support/config/load.js';
import type { Logger } from '../support/logger.js';
import type { TurnPayload } from '../queue/mailbox.js';
import type { TurnContext } from '../queue/worker.js';
import type { AgentRuntime } from './agent-runtime.js';
import { DEFAULT_PROFILE } from '../support/config/profile-names.js';
import { memoryKeyOf, searchProfileOf, type Profile } from '../features/profiles/table.js';
import type { McpHub } from '../features/mcp/hub.js';
import type { ScheduleService } from '../features/schedules/service.js';
import { scheduleOrigin } from '../features/schedules/store.js';
import { SCHEDULE_ORIGIN_CONTEXT, SCHEDULE_TOOL, createScheduleTool } from '../features/schedules/tool.js';
import { ClarifyBroker } from './clarify.js';
import type { SkillLibrary } from '../features/skills/library.js';
import { createSkillManageTool, createSkillViewTool } from '../features/skills/tools.js';
import { APPROVAL_TURN_CONTEXT, type ApprovalGate, type ApprovalTurn } from '../features/approvals/gate.js';
import type { ApprovalPolicy } from '../features/approvals/policy.js';
import { deliver } from '../out/send-reply.js';
import { CODE_TOOLSET, CODE_TURN_CONTEXT, EXECUTE_CODE_TOOL, offersCode, type CodeTools } from '../features/sandbox/index.js';

/** The gateway's own toolset: the schedule tool (it needs the queue, so agent-core does not know it). */
const SCHEDULE_TOOLSET = 'schedule';

/** The configured toolsets agent-core builds (all but the gateway's own: schedule, code). */
export function builtinToolsets(toolsets: readonly string[]): string[] {
  return toolsets.filter((t) => t !== SCHEDULE_TOOLSET && t !== CODE_TOOLSET);
}

export interface TurnToolsDeps {
  config: Pick<
    HeraldConfig,
    'toolsets' | 'fetchAllowPrivate' | 'timezone' | 'redisPrefix' | 'schedulesPerUser' | 'delegateMaxPerTurn' | 'delegateMaxIterations'
  >;
  store: SessionStore;
  agent: AgentRuntime | null;
  /** The side-task chain session_search summarises with (features/sessions/models.ts SideTaskModels); the agent's model when absent. */
  sideProvider?: Provider | null;
  redis: Redis;
  log: Logger;
  /** How long clarify waits for the user; the tool's default (300 s) when absent. */
  clarifyTimeoutMs?: number;
  /** This worker's MCP servers; their tools are added per turn, as they are listed at that moment. */
  mcp: McpHub | null;
  /** Scheduled tasks; the schedule tool is offered when the toolsets include it and users may set tasks. */
  schedules: ScheduleService;
  /** What send_file may send, and how many files a reply may carry (0: send_file is left out). */
  files: { limits: OutboundFileLimits; perTurn: number };
  /** The agent profile these tools serve: its notes, its session_search scope, its MCP servers. */
  profile?: Profile;
  /** execute_code (features/sandbox), offered when the toolsets include code; null when no backend was found. */
  code: CodeTools | null;
  /** Skills (skill_view; skill_manage where the profile allows it). */
  skills: SkillLibrary;
  /** Approvals and the tool-call audit: the hooks every tool call of a turn runs through (features/approvals). */
  approvals: ApprovalGate;
}

interface TurnToolsInput {
  ctx: TurnContext;
  egress: PlatformEgress;
  /** The message the turn answers: where questions go and whose notes are shown. */
  payload: TurnPayload;
  /** Where send_file puts the files of this turn's reply. */
  files: FileSink;
  /** The saved notes read with the turn's begin (PostgreSQL), shown when they are the notes' owner's. */
  notes?: NotesRead | null;
}

/** What the tools stage is told about the loop it plans for (turn/stages/plan.ts). */
interface ToolPlanInput {
  /** The user's message as composed from the turn's entries (files read included). */
  userMessage: string;
  history: readonly ChatMessage[];
  /** The turn's own providers (the session's model, metered and capped): subagents run on them. */
  provider: Provider;
  fallbacks: Provider[];
  maxIterations?: number;
  /** What every tool call is told regardless of tools (session, user, platform, side provider). */
  toolContext: Record<string, unknown>;
}

/** The tools' part of the loop plan: the plan stage takes these fields from here, each once. */
export interface ToolPlan {
  /** The user's message, a spoofed notes block removed. */
  userMessage: string;
  /** The saved notes block for this turn's requests (never stored); null when there are none. */
  requestContext: string | null;
  tools: Tool[];
  /** One iteration budget shared with subagents. */
  budget: IterationBudget;
  /** Steer messages, read through the clarify broker (an answer to its question is not a steer). */
  getSteerMessages: () => string[];
  toolContext: Record<string, unknown>;
  /** Around every tool call, in order (approval, then audit). */
  toolHooks: ToolHook[];
}

interface TurnTools {
  /** This turn's tools, budget, steer intake, notes block and clarify channel. */
  plan(input: ToolPlanInput): Promise<ToolPlan>;
}

export interface TurnToolsFactory {
  readonly tools: readonly Tool[];
  /** The names of every tool a turn of this profile offers besides MCP servers' (the prompt's tool guidance). */
  readonly toolNames: readonly string[];
  forTurn(input: TurnToolsInput): TurnTools;
  /** Whose saved notes a turn by this platform user shows (null when the profile has no memory): read with its begin. */
  notesKey(platform: string, userId: string): string | null;
}

/** Builds the tools once; logs the ones a worker cannot offer and why. */
export function createTurnTools(deps: TurnToolsDeps): TurnToolsFactory {
  const { config, store, agent, log } = deps;
  const { tools: builtins, unavailable } = createBuiltinTools(
    {
      store,
      provider: agent?.primary,
      sideProvider: deps.sideProvider ?? undefined,
      fallbacks: agent?.fallbacks,
      fallbackState: agent?.fallbackState,
      timeZone: config.timezone,
      fetch: { allowPrivate: config.fetchAllowPrivate },
      canAskUser: true,
      clarifyTimeoutMs: deps.clarifyTimeoutMs,
      canSendFiles: deps.files.perTurn > 0,
      fileLimits: deps.files.limits,
      delegate: { maxPerTurn: config.delegateMaxPerTurn, maxIterations: config.delegateMaxIterations },
    },
    builtinToolsets(config.toolsets),
  );
  const tools = [...builtins, ...skillTools(deps.skills, deps.profile)];
  const { schedules } = deps;
  const withSchedule = config.schedulesPerUser > 0 && (config.toolsets.includes(SCHEDULE_TOOLSET) || config.toolsets.includes('full'));
  for (const { name, reason } of unavailable) log.warn({ tool: name, reason }, `tool ${name} left out: ${reason}`);
  const code = offersCode(config.toolsets) ? deps.code : null;
  const profile = deps.profile;
  const own = [...(withSchedule ? [SCHEDULE_TOOL] : []), ...(code ? [EXECUTE_CODE_TOOL] : [])];
  log.info({ profile: profile?.name ?? DEFAULT_PROFILE, toolsets: config.toolsets, tools: [...tools.map((t) => t.name), ...own] }, 'agent tools ready');
  const hasMemory = tools.some((t) => t.name === MEMORY_TOOL);
  // A scheduled task's turn has nobody to ask: the user did not start it and may not be there.
  const scheduledTools = tools.filter((t) => t.name !== CLARIFY_TOOL);
  const buttons = new ButtonStore(deps.redis, config.redisPrefix);

  // Built once for the profile: what a call needs of its turn comes in the tool context (schedule origin, session).
  const scheduleTool = withSchedule ? (createScheduleTool(schedules, config.timezone) as Tool) : null;
  const codeTool = code?.tool ?? null;
  const memoryOwner = profile ?? null;
  const searchProfile = profile ? searchProfileOf(profile) : undefined;
  const policy = profile?.approvals ?? { tools: [], exempt: [] };
  const userKeyOf = (platform: string, userId: string): string => (memoryOwner ? memoryKeyOf(memoryOwner, platform, userId) : `${platform}:${userId}`);

  return {
    tools,
    toolNames: [...tools.map((t) => t.name), ...(withSchedule ? [SCHEDULE_TOOL] : [])],
    notesKey: (platform, userId) => (hasMemory ? userKeyOf(platform, userId) : null),
    forTurn({ ctx, egress, payload, files, notes }) {
      const { clarify, takeSteerMessages } = lazyClarify({ redis: deps.redis, prefix: config.redisPrefix, buttons, ctx, egress, payload });
      return {
        async plan(input) {
          const budget = new IterationBudget(input.maxIterations ?? DEFAULT_MAX_ITERATIONS);
          const toolContext = { platform: payload.platform, userId: payload.userId, ...input.toolContext, budget, clarify, files };
          // The notes shown are those of the person the memory tool writes for: the same platform + user id, in
          // this profile unless it shares the default profile's memory (features/profiles/table.ts).
          const { platform, userId } = toolContext;
          const userKey = typeof platform === 'string' && typeof userId === 'string' ? userKeyOf(platform, userId) : null;
          const withNotes = hasMemory && userKey !== null;
          // Subagents run on the turn's own providers (the session's model; priced and capped by the prepare stage).
          const turnProviders = { primary: input.provider, fallbacks: input.fallbacks };
          const scoped = {
            ...toolContext,
            turnProviders,
            ...(userKey !== null && { userKey }),
            ...(searchProfile !== undefined && { searchProfile }),
            // A task set in this turn belongs to its user and delivers to this chat (worked out if one is set).
            ...(scheduleTool && { [SCHEDULE_ORIGIN_CONTEXT]: () => scheduleOrigin(payload, ctx.sessionKey) }),
            // Code runs in the session's own work dir (sessionId); the files of this turn's messages are readable inside.
            ...(codeTool && { [CODE_TURN_CONTEXT]: { messages: ctx.entries.map((e) => e.payload) } }),
            // The approval hooks' view of this turn (features/approvals/gate.ts).
            [APPROVAL_TURN_CONTEXT]: approvalTurn({ buttons, ctx, egress, payload }, String(input.toolContext.sessionId), policy),
          };
          return {
            userMessage: stripMemoryMarker(input.userMessage),
            // The notes, read now for the whole turn: the loop shows them with each request and stores them nowhere.
            requestContext: withNotes ? await prefetchMemoryBlock(store, userKey, notes) : null,
            tools: [
              // No clarify where nobody can answer: a scheduled run, or a client waiting on one HTTP request (the API).
              ...(payload.scheduled || egress.platform === 'api' ? scheduledTools : tools),
              ...(scheduleTool ? [scheduleTool] : []),
              ...(deps.mcp?.toolsFor(profile?.name ?? DEFAULT_PROFILE) ?? []),
              ...(codeTool ? [codeTool] : []),
            ],
            budget,
            getSteerMessages: takeSteerMessages,
            toolContext: scoped,
            toolHooks: deps.approvals.hooks,
          };
        },
      };
    },
  };
}

/** Where a turn's questions go: its chat, as a reply to the message it answers, with buttons. */
interface TurnChat {
  buttons: ButtonStore;
  ctx: TurnContext;
  egress: PlatformEgress;
  payload: TurnPayload;
}

/**
 * The turn's clarify channel, whose broker (turn/clarify.ts) is made when the agent first asks — most turns never do;
 * until then steer messages go straight to the loop, as the broker passes them on with no question open.
 */
function lazyClarify(chat: TurnChat & { redis: Redis; prefix: string }): { clarify: ClarifyChannel; takeSteerMessages: () => string[] } {
  const { buttons, ctx, egress, payload } = chat;
  let broker: ClarifyBroker | null = null;
  const clarify: ClarifyChannel = {
    ask: (question, signal, choices) => {
      broker ??= new ClarifyBroker({
        redis: chat.redis,
        prefix: chat.prefix,
        sessionKey: ctx.sessionKey,
        send: async (q, offeredChoices) => {
          if (!(await ctx.canDeliver())) throw new Error('the conversation moved on; the question was not sent');
          // One button per choice; only the person whose turn it is may press them (their press is the answer).
          const offered =
            offeredChoices.length > 0
              ? await buttons.offer({ userId: payload.userId, choices: offeredChoices.map((c) => ({ label: c, text: c })), once: false })
              : null;
          await deliver(egress, payload.conversationId, q, { replyTo: payload.platformMessageId, buttons: offered?.buttons });
          return offered ? () => buttons.withdraw(offered.id) : undefined;
        },
        takeSteerMessages: ctx.takeSteerMessages,
      });
      return broker.ask(question, signal, choices);
    },
  };
  return { clarify, takeSteerMessages: () => (broker ? broker.takeSteerMessages() : ctx.takeSteerMessages()) };
}

/** The approval hooks' view of a turn (features/approvals/gate.ts), put in its tool context. */
function approvalTurn({ buttons, ctx, egress, payload }: TurnChat, sessionId: string, policy: ApprovalPolicy): ApprovalTurn {
  return {
    sessionId,
    sessionKey: ctx.sessionKey,
    platform: payload.platform,
    conversationId: payload.conversationId,
    chatId: payload.chatId,
    chatType: payload.chatType,
    userId: payload.userId,
    policy,
    cannotAsk: egress.platform === 'api' ? 'api' : payload.scheduled ? 'scheduled' : null,
    // The question goes where clarify's go; only the approvers' presses count.
    ask: async (text, choices, pressers) => {
      if (!(await ctx.canDeliver())) throw new Error('the conversation moved on; the approval question was not sent');
      const offered = await buttons.offer({ userId: payload.userId, pressers, choices, once: true });
      await deliver(egress, payload.conversationId, text, { replyTo: payload.platformMessageId, buttons: offered.buttons });
      return offered.id;
    },
    withdraw: (offerId) => buttons.withdraw(offerId),
    touch: () => ctx.touch(),
  };
}

/** skill_view when the profile has skills to read; skill_manage when it may write them. */
function skillTools(library: SkillLibrary, profile: Profile | undefined): Tool[] {
  const owner = { name: profile?.name ?? DEFAULT_PROFILE, skillsDir: profile?.skillsDir, skillManage: profile?.skillManage ?? false };
  if (!library.offeredTo({ ...owner, reviewWrites: profile?.review.enabled })) return [];
  return [createSkillViewTool(library, owner), ...(owner.skillManage ? [createSkillManageTool(library, owner)] : [])];
}

export interface FlushSessionMemoryDeps {
  store: SessionStore;
  agent: AgentRuntime | null;
  /** The memory tool's toolsets must be on; otherwise nothing is flushed. */
  toolsets: readonly string[];
  /** Whose notes (the profile's memory key, features/profiles/table.ts); default `<source>:<user id>`. */
  userKey?: string;
}

/**
 * Lets the model save notes from a session about to lose its details: call it before /new ends the session
 * (reason 'reset') and from compression's `beforeCompress` hook (reason 'compression'). Null when there is
 * nothing to do (no model, memory not enabled, no user on the session). Never throws for a provider failure.
 */
/** Whether the configured toolsets give the agent the memory tool (only then is there anything to flush). */
export function offersMemory(toolsets: readonly string[]): boolean {
  // A name lookup: building the tools to look (a registry, a time formatter, every schema) cost that on every turn.
  return resolveToolsets(builtinToolsets(toolsets)).includes(MEMORY_TOOL);
}

export async function flushSessionMemory(
  deps: FlushSessionMemoryDeps,
  session: Session,
  reason: FlushReason,
  signal?: AbortSignal,
): Promise<FlushMemoryResult | null> {
  const { agent, store } = deps;
  if (!agent || !session.userId) return null;
  if (!offersMemory(deps.toolsets)) return null;
  return flushMemory({
    provider: agent.primary,
    history: await store.getHistory(session.id),
    userKey: deps.userKey ?? `${session.source}:${session.userId}`,
    store,
    systemPrompt: session.systemPrompt ?? agent.systemPrompt,
    reason,
    signal,
  });
}
