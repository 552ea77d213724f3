/**
 * The built-in tools and their toolsets:
 *   core      memory, todo, current_time, send_file (where the caller can deliver files)
 *   research  session_search, web_fetch
 *   full      core + research + delegate_task, clarify
 * `createBuiltinTools(deps, toolsets)` builds them from what the caller has (a store, a provider, a way to ask
 * the user) and returns the ones that can run plus, for the log, the ones left out and why.
 */
import type { FallbackState } from '../providers/fallback.js';
import type { Provider } from '../providers/types.js';
import type { SessionStore } from '../store/session-store.js';
import { ToolRegistry, type Availability, type Tool } from '../tools/registry.js';
import { defaultToolsets, type ToolsetDefinition, type ToolsetRegistry } from '../tools/toolsets.js';
import { CLARIFY_TOOL, createClarifyTool } from './clarify.js';
import { CURRENT_TIME_TOOL, createCurrentTimeTool } from './current-time.js';
import { DELEGATE_TOOL, createDelegateTool } from './delegate-task.js';
import { MEMORY_TOOL, createMemoryTool } from './memory.js';
import { SESSION_SEARCH_TOOL, createSessionSearchTool } from './session-search.js';
import { TODO_TOOL, createTodoTool } from './todo.js';
import { WEB_FETCH_TOOL, createWebFetchTool, type WebFetchOptions } from './web-fetch.js';
import { SEND_FILE_TOOL, createSendFileTool } from './send-file.js';
import type { OutboundFileLimits } from './outbound-file.js';
import './tables.js';

export const BUILTIN_TOOLSETS: readonly ToolsetDefinition[] = [
  {
    name: 'core',
    description: 'Memory across conversations, a task list, the time, files to the chat',
    tools: [MEMORY_TOOL, TODO_TOOL, CURRENT_TIME_TOOL, SEND_FILE_TOOL],
  },
  { name: 'research', description: 'Search earlier conversations, fetch web pages', tools: [SESSION_SEARCH_TOOL, WEB_FETCH_TOOL] },
  { name: 'full', description: 'Everything, plus subagents and questions to the user', tools: [DELEGATE_TOOL, CLARIFY_TOOL], includes: ['core', 'research'] },
];
export const DEFAULT_TOOLSETS: readonly string[] = ['core'];

/** Adds the built-in toolsets to a toolset registry (the process-wide one by default); idempotent. */
export function defineBuiltinToolsets(toolsets: ToolsetRegistry = defaultToolsets): ToolsetRegistry {
  for (const def of BUILTIN_TOOLSETS) if (!toolsets.get(def.name)) toolsets.define(def);
  return toolsets;
}
defineBuiltinToolsets();

export interface BuiltinToolDeps {
  /** memory, todo and session_search keep their data in the session store. */
  store?: SessionStore;
  /** delegate_task runs subagents on it; session_search summarises with it unless `sideProvider` is given. */
  provider?: Provider;
  /** The side-task model (an auxiliary model with its fallbacks) session_search summarises with. */
  sideProvider?: Provider;
  fallbacks?: Provider[];
  fallbackState?: FallbackState;
  /** current_time's default zone (HERALD_TIMEZONE); the host's zone when absent. */
  timeZone?: string;
  fetch?: WebFetchOptions;
  /** Whether the caller puts a ClarifyChannel in toolContext (a chat platform can; a batch job cannot). */
  canAskUser?: boolean;
  clarifyTimeoutMs?: number;
  /** Whether the caller puts a FileSink in toolContext and delivers the files (the gateway does), and its limits. */
  canSendFiles?: boolean;
  fileLimits?: OutboundFileLimits;
  /** delegate_task: subagents per turn and iterations per subagent (defaults 3 and 50). */
  delegate?: { maxPerTurn?: number; maxIterations?: number };
}

/** A stand-in for a tool that cannot be built: it is reported as unavailable with `reason` and never offered. */
function missing(name: string, reason: string): Tool {
  return {
    name,
    description: reason,
    parameters: { type: 'object', properties: {} },
    readOnly: true,
    requires: () => reason,
    execute: async () => {
      throw new Error(reason);
    },
  };
}

/** Every built-in tool, including those that cannot run with these deps (their `requires` says why). */
export function builtinToolRegistry(deps: BuiltinToolDeps, parentTools: () => readonly Tool[] = () => []): ToolRegistry {
  const { store, provider } = deps;
  const noStore = 'needs the session store';
  return new ToolRegistry([
    store ? createMemoryTool(store) : missing(MEMORY_TOOL, noStore),
    store ? createTodoTool(store) : missing(TODO_TOOL, noStore),
    createCurrentTimeTool({ timeZone: deps.timeZone }),
    store ? createSessionSearchTool({ store, provider: deps.sideProvider ?? provider }) : missing(SESSION_SEARCH_TOOL, noStore),
    createWebFetchTool(deps.fetch),
    provider
      ? createDelegateTool({ provider, fallbacks: deps.fallbacks, fallbackState: deps.fallbackState, parentTools, ...deps.delegate })
      : missing(DELEGATE_TOOL, 'needs a model (HERALD_MODEL)'),
    deps.canAskUser ? createClarifyTool({ timeoutMs: deps.clarifyTimeoutMs }) : missing(CLARIFY_TOOL, 'needs a chat to ask the user in'),
    deps.canSendFiles ? createSendFileTool({ limits: deps.fileLimits, fetch: deps.fetch }) : missing(SEND_FILE_TOOL, 'needs a chat to send files to'),
  ]);
}

/**
 * The built-in tools of `toolsets` that can run with `deps`, and those left out with the reason (log them).
 * An unknown toolset name throws UnknownToolsetError.
 */
export function createBuiltinTools(
  deps: BuiltinToolDeps,
  toolsets: readonly string[] = DEFAULT_TOOLSETS,
  registry: ToolsetRegistry = defaultToolsets,
): Availability {
  let chosen: readonly Tool[] = [];
  // delegate_task gives its children the read-only tools of this same selection.
  const tools = builtinToolRegistry(deps, () => chosen);
  const availability = tools.available(defineBuiltinToolsets(registry).resolve(toolsets));
  chosen = availability.tools;
  return availability;
}

export type { ClarifyChannel, BuiltinToolContext, FileSink } from './context.js';
export { CLARIFY_TOOL, DEFAULT_CLARIFY_TIMEOUT_MS, MAX_CLARIFY_CHOICES, createClarifyTool } from './clarify.js';
export { CURRENT_TIME_TOOL, createCurrentTimeTool, describeTime } from './current-time.js';
export { isValidTimeZone } from '../base/time-zones.js';
export { CHILD_SYSTEM_PROMPT, DEFAULT_CHILD_MAX_ITERATIONS, DELEGATE_TOOL, MAX_CHILDREN_PER_TURN, childToolsOf, createDelegateTool } from './delegate-task.js';
export { flushMemory, flushPrompt, type FlushMemoryOptions, type FlushMemoryResult, type FlushReason } from './flush-memory.js';
export {
  MEMORY_BLOCK_CLOSE,
  MEMORY_BLOCK_OPEN,
  MEMORY_TOOL,
  createMemoryTool,
  renderMemoryBlock,
  stripMemoryBlock,
  stripMemoryMarker,
  prefetchMemoryBlock,
  withoutStoredMemoryBlocks,
} from './memory.js';
export { MEMORY_CHAR_LIMITS, MemoryEditError, MemoryStore, type MemoryEntry, type MemorySnapshot, type MemoryTarget } from './memory-store.js';
export { SESSION_SEARCH_TOOL, createSessionSearchTool } from './session-search.js';
export { TODO_STATUSES, TODO_TOOL, createTodoTool, formatTodos, getTodos, type TodoItem, type TodoStatus } from './todo.js';
export { MAX_FETCH_BYTES, MAX_REDIRECTS, WEB_FETCH_TOOL, createWebFetchTool, fetchUrl, type WebFetchOptions } from './web-fetch.js';
export { BlockedAddressError, isPublicAddress } from './address-guard.js';
export { SEND_FILE_TOOL, createSendFileTool, type SendFileToolOptions } from './send-file.js';
export {
  DEFAULT_OUTBOUND_FILE_LIMITS,
  OutboundFileError,
  formatBytes,
  outboundFile,
  outboundFileFromUrl,
  typeAllowed,
  type FileHints,
  type OutboundFileLimits,
} from './outbound-file.js';
export { htmlToText } from './html-to-text.js';
