/**
 * Commands that show or change what a session is, without touching its transcript: /status, /usage, /model.
 * They read while a turn runs and never interrupt it.
 */
import { contextWindowFor, formatTodos, getTodos, type Session } from '@herald/agent-core';
import { compressionsOf } from '../sessions/counters.js';
import { checkModelRef, modelChoices } from '../sessions/models.js';
import { openSession, sessionInit, type CommandDeps, type CommandInput } from './context.js';
import { ago } from './format.js';

/** chars/4: the estimate used when the provider has not reported a prompt size yet. */
const CHARS_PER_TOKEN = 4;
const NO_SESSION = 'No conversation yet — send a message to start one.';

export async function statusCommand(deps: CommandDeps, { sessionKey }: CommandInput): Promise<string> {
  const busy = await deps.mailbox.isBusy(sessionKey);
  const pending = Math.max((await deps.mailbox.length(sessionKey)) - (busy ? 1 : 0), 0);
  const running = busy ? `▶️ A task is running${pending ? ` (${pending} queued)` : ''}.` : '💤 Idle.';
  const s = await openSession(deps, sessionKey);
  if (!s) return `${NO_SESSION}\n${running}`;
  const lastAt = await deps.store.lastMessageAt(s.id);
  const todos = await getTodos(deps.store, s.id);
  return [
    `Session ${s.id}${s.title ? ` — “${s.title}”` : ''}`,
    `Started ${ago(s.startedAt)} · last activity ${lastAt !== null ? ago(lastAt) : 'none'}`,
    `Messages ${s.messageCount} · tokens in ${fmt(s.inputTokens)} / out ${fmt(s.outputTokens)}`,
    `Model ${modelOf(deps, s) ?? 'not configured'}`,
    running,
    ...(todos.length ? ['', formatTodos(todos)] : []),
  ].join('\n');
}

export async function usageCommand(deps: CommandDeps, { sessionKey }: CommandInput): Promise<string> {
  const s = await openSession(deps, sessionKey);
  if (!s) return NO_SESSION;
  const model = modelOf(deps, s);
  const window = contextWindowFor(model?.slice(model.indexOf(':') + 1) ?? '', deps.conversation?.config.contextWindow);
  const used = s.lastPromptTokens ?? (await estimateTokens(deps, s));
  const percent = Math.min(100, Math.round((used / window) * 100));
  const calls = await deps.conversation?.counters.apiCalls(s.id);
  return [
    `Tokens: in ${fmt(s.inputTokens)} · out ${fmt(s.outputTokens)} · cache read ${fmt(s.cacheReadTokens)} · cache write ${fmt(s.cacheWriteTokens)}`,
    `API calls: ${calls === undefined ? 'n/a' : fmt(calls)}`,
    `Context: ${fmt(used)} / ${fmt(window)} tokens (${percent}%)${s.lastPromptTokens === null ? ' (estimated)' : ''}`,
    `Compressions: ${await compressionsOf(deps.store, s)}`,
    ...(s.estimatedCostUsd > 0 ? [`Estimated cost: $${s.estimatedCostUsd.toFixed(4)}`] : []),
  ].join('\n');
}

export async function modelCommand(deps: CommandDeps, { command, msg, sessionKey }: CommandInput): Promise<string> {
  const config = deps.conversation?.config;
  if (!config) return 'Model switching is not available here.';
  const current = await openSession(deps, sessionKey);
  const arg = command.args.trim();
  if (arg === '') {
    const choices = modelChoices(config);
    const active = (current && modelOf(deps, current)) ?? config.model ?? 'not configured';
    return [
      `Model of this conversation: ${active}`,
      ...(choices.length ? ['Configured:', ...choices.map((c, i) => `• ${c}${i === 0 ? ' (default)' : ''}`)] : []),
      'Change it with /model provider:model (any model your providers serve), or /model default.',
    ].join('\n');
  }
  const wanted = arg.toLowerCase() === 'default' ? config.model : arg;
  if (!wanted) return 'No default model is configured (HERALD_MODEL).';
  const checked = checkModelRef(config, wanted);
  if (!checked.ok) return `⚠️ ${checked.reason}`;
  const session = current ?? (await deps.store.getOrCreateSession(sessionKey, sessionInit(deps, msg))).session;
  await deps.store.setModel(session.id, checked.ref);
  return `🧠 This conversation now uses ${checked.ref}.`;
}

function modelOf(deps: CommandDeps, s: Session): string | null {
  return s.model ?? deps.conversation?.config.model ?? null;
}

async function estimateTokens(deps: CommandDeps, s: Session): Promise<number> {
  const chars = (await deps.store.getHistory(s.id)).reduce((n, m) => n + (m.content?.length ?? 0) + JSON.stringify(m.tool_calls ?? '').length, 0);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
