/**
 * What the built-in tools read from `toolContext` (the loop hands it to every tool next to the signal), with
 * type guards: the context is an open record, so each field is checked where it is used instead of trusted.
 */
import type { SessionSource } from '../base/types.js';
import type { Provider } from '../providers/types.js';
import type { NewTurnFile } from '../store/turn-files.js';
import type { ToolContext } from '../tools/registry.js';
import { IterationBudget } from '../loop/budget.js';

/** How clarify reaches the user: the platform side sends the question and resolves with the user's answer. */
export interface ClarifyChannel {
  /**
   * Rejects when `signal` aborts (turn interrupted, or the question timed out). `choices`, when given, are already
   * numbered in `question`; a chat that can show buttons shows one per choice, whose press answers with its text.
   */
  ask(question: string, signal: AbortSignal, choices?: readonly string[]): Promise<string>;
}

/** Where send_file puts a file: the caller keeps the turn's files and sends them with the reply. */
export interface FileSink {
  /** Takes the file for this turn's reply; throws (with what to tell the model) when the turn has no room left. */
  add(file: NewTurnFile): void;
}

/** The fields a caller puts in `toolContext` for the built-in tools. All optional: a tool says what it misses. */
export interface BuiltinToolContext {
  /** The session the turn belongs to (todo lists, excluding the current session from search). */
  sessionId?: string;
  /** Platform (sessions.source) and platform user id: together they key memory and scope session_search. */
  platform?: string;
  /** Overrides `platform:userId` as the memory key (flushMemory passes it directly). */
  userKey?: string;
  userId?: string;
  /** session_search looks only in this agent profile's sessions (absent: the person's sessions in any profile). */
  searchProfile?: string;
  /**
   * The providers the turn itself uses (the session's model, metered and rate-capped by the caller): subagents use
   * them instead of the ones the tools were built with, so their calls count where the turn's do.
   */
  turnProviders?: TurnProviders;
  /**
   * The side-task chain as the turn uses it (metered by the caller): session_search summarises with it instead of
   * the one the tools were built with, so the summary counts where the turn's calls do.
   */
  sideProvider?: Provider;
  /** The turn's iteration budget, shared with subagents. */
  budget?: IterationBudget;
  clarify?: ClarifyChannel;
  files?: FileSink;
}

const SOURCES: readonly string[] = ['telegram', 'discord', 'slack', 'whatsapp', 'matrix', 'cli', 'api'];

/** `telegram:42`: memory belongs to a person on a platform, not to one chat or session. */
export function userKeyOf(ctx: ToolContext): string | null {
  if (typeof ctx.userKey === 'string' && ctx.userKey !== '') return ctx.userKey;
  const { platform, userId } = ctx;
  if (typeof platform !== 'string' || platform === '' || typeof userId !== 'string' || userId === '') return null;
  return `${platform}:${userId}`;
}

export function sourceOf(ctx: ToolContext): SessionSource | null {
  return typeof ctx.platform === 'string' && SOURCES.includes(ctx.platform) ? (ctx.platform as SessionSource) : null;
}

export function userIdOf(ctx: ToolContext): string | null {
  return typeof ctx.userId === 'string' && ctx.userId !== '' ? ctx.userId : null;
}

export function searchProfileOf(ctx: ToolContext): string | undefined {
  return typeof ctx.searchProfile === 'string' && ctx.searchProfile !== '' ? ctx.searchProfile : undefined;
}

export interface TurnProviders {
  primary: Provider;
  fallbacks: Provider[];
}

export function turnProvidersOf(ctx: ToolContext): TurnProviders | null {
  const p = ctx.turnProviders as Partial<TurnProviders> | undefined;
  return p && typeof p.primary?.complete === 'function' && Array.isArray(p.fallbacks) ? (p as TurnProviders) : null;
}

export function sideProviderOf(ctx: ToolContext): Provider | null {
  const p = ctx.sideProvider as Partial<Provider> | undefined;
  return p && typeof p.complete === 'function' ? (p as Provider) : null;
}

export function sessionIdOf(ctx: ToolContext): string | null {
  return typeof ctx.sessionId === 'string' && ctx.sessionId !== '' ? ctx.sessionId : null;
}

export function budgetOf(ctx: ToolContext): IterationBudget | null {
  return ctx.budget instanceof IterationBudget ? ctx.budget : null;
}

export function clarifyOf(ctx: ToolContext): ClarifyChannel | null {
  const c = ctx.clarify as Partial<ClarifyChannel> | undefined;
  return c && typeof c.ask === 'function' ? (c as ClarifyChannel) : null;
}

export function filesOf(ctx: ToolContext): FileSink | null {
  const f = ctx.files as Partial<FileSink> | undefined;
  return f && typeof f.add === 'function' ? (f as FileSink) : null;
}

/**
 * Argument helpers: the model's JSON is checked, and a wrong type becomes a message it can act on (the loop turns
 * a thrown error into an `Error: <tool> failed: <message>` result).
 */
export class ToolInputError extends Error {
  override name = 'ToolInputError';
}

export function stringArg(args: Record<string, unknown>, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v.trim() === '') throw new ToolInputError(`"${name}" is required and must be a non-empty string`);
  return v;
}

export function optionalStringArg(args: Record<string, unknown>, name: string): string | undefined {
  const v = args[name];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new ToolInputError(`"${name}" must be a string`);
  return v;
}

export function optionalIntArg(args: Record<string, unknown>, name: string): number | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new ToolInputError(`"${name}" must be a whole number`);
  return n;
}
