/**
 * Commands that show or change what a session is, without touching its transcript: /status, /usage, /model.
 * They read while a turn runs and never interrupt it.
 */
import { contextWindowFor, formatTodos, getTodos, type Session } from '@herald/agent-core';
import { compressionsOf } from '../../features/sessions/counters.js';
import { cachePercent } from '../../features/llm/cache-health.js';
import { checkModelRef, modelChoices } from '../../features/sessions/models.js';
import { openSession, sessionOrStart, type CommandDeps, type CommandInput } from './context.js';
import { ago } from './format.js';

/** chars/4: the estimate used when the provider has not reported a prompt size yet. */
const CHARS_PER_TOKEN = 4;
const NO_SESSION = 'No conversation yet — send a message to start one.';

export async function statusCommand(deps: CommandDeps, { sessionKey, profile }: CommandInput): Promise<string> {
  const busy = await deps.mailbox.isBusy(sessionKey);
  const pending = Math.max((await deps.mailbox.length(sessionKey)) - (busy ? 1 : 0), 0);
  const running = busy ? `▶️ A task is running${pending ? ` (${pending} queued)` : ''}.` : '💤 Idle.';
  const s = await openSession(deps, sessionKey);
  if (!s) return `${NO_SESSION}\nProfile ${profile.name}\n${running}`;
  const lastAt = await deps.store.lastMessageAt(s.id);
  const todos = await getTodos(deps.store, s.id);
  const prompt = await deps.conversation.prompts.recordFor(deps.store, s);
  return [
    `Session ${s.id}${s.title ? ` — “${s.title}”` : ''}`,
    `Started ${ago(s.startedAt)} · last activity ${lastAt !== null ? ago(lastAt) : 'none'}`,
    `Messages ${s.messageCount} · tokens in ${fmt(s.inputTokens)} / out ${fmt(s.outputTokens)}`,
    `Profile ${profile.name} · model ${s.model ?? profile.model ?? 'not configured'}`,
    ...(prompt ? [`Prompt: ${prompt.layers.map((l) => l.name).join(' → ')} · personality ${prompt.personality ?? 'none'} (/prompt shows it)`] : []),
    running,
    ...(todos.length ? ['', formatTodos(todos)] : []),
  ].join('\n');
}

export async function usageCommand(deps: CommandDeps, { sessionKey, msg, profile }: CommandInput): Promise<string> {
  // Spend and what is left of each budget (features/budgets/guard.ts), with or without a conversation.
  const spend = await deps.conversation.budgets.usageLines({ profile: profile.name, platform: msg.platform, userId: msg.userId });
  const s = await openSession(deps, sessionKey);
  if (!s) return [NO_SESSION, ...spend].join('\n');
  const hit = cachePercent(s.inputTokens, s.cacheReadTokens, s.cacheWriteTokens);
  const model = s.model ?? profile.model ?? null;
  const window = contextWindowFor(model?.slice(model.indexOf(':') + 1) ?? '', deps.conversation.config.contextWindow);
  const used = s.lastPromptTokens ?? (await estimateTokens(deps, s));
  const percent = Math.min(100, Math.round((used / window) * 100));
  const calls = await deps.conversation.counters.apiCalls(s.id);
  return [
    `Tokens: in ${fmt(s.inputTokens)} · out ${fmt(s.outputTokens)} · cache read ${fmt(s.cacheReadTokens)} · cache write ${fmt(s.cacheWriteTokens)}`,
    `API calls: ${fmt(calls)}`,
    `Context: ${fmt(used)} / ${fmt(window)} tokens (${percent}%)${s.lastPromptTokens === null ? ' (estimated)' : ''}`,
    `Compressions: ${await compressionsOf(deps.store, s)}`,
    `Prompt cache: ${hit === null ? 'n/a' : `${hit} % of prompt tokens read from cache`}`,
    `Estimated cost of this conversation: $${s.estimatedCostUsd.toFixed(4)}`,
    ...spend,
  ].join('\n');
}

export async function modelCommand(deps: CommandDeps, { command, msg, sessionKey, profile }: CommandInput): Promise<string> {
  const { config } = deps.conversation;
  const current = await openSession(deps, sessionKey);
  const arg = command.args.trim();
  if (arg === '') {
    const choices = modelChoices(profile);
    const active = current?.model ?? profile.model ?? 'not configured';
    return [
      `Model of this conversation: ${active}`,
      ...(choices.length ? ['Configured:', ...choices.map((c, i) => `• ${c}${i === 0 ? ' (default)' : ''}`)] : []),
      'Change it with /model provider:model (any model your providers serve), or /model default.',
    ].join('\n');
  }
  const wanted = arg.toLowerCase() === 'default' ? profile.model : arg;
  if (!wanted) return 'No default model is configured (HERALD_MODEL).';
  const checked = checkModelRef(config, wanted);
  if (!checked.ok) return `⚠️ ${checked.reason}`;
  const session = current ?? (await sessionOrStart(deps, sessionKey, msg, profile));
  await deps.store.setModel(session.id, checked.ref);
  return `🧠 This conversation now uses ${checked.ref}.`;
}

async function estimateTokens(deps: CommandDeps, s: Session): Promise<number> {
  const chars = (await deps.store.getHistory(s.id)).reduce((n, m) => n + (m.content?.length ?? 0) + JSON.stringify(m.tool_calls ?? '').length, 0);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}
