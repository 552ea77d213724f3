/**
 * What each command does. Commands run on the ingress process, never through the queue, so they answer at once
 * even while a turn runs — and /stop reaches a turn on any worker through Redis.
 */
import type { InboundMessage } from '@herald/adapters';
import type { SessionStore } from '@herald/agent-core';
import type { ControlBus } from '../queue/control.js';
import type { Mailbox } from '../queue/mailbox.js';
import type { TurnProducer } from '../queue/producer.js';
import { payloadFrom } from '../ingress/payload.js';
import { helpText, type ParsedCommand } from './registry.js';

export interface CommandDeps {
  store: SessionStore;
  mailbox: Mailbox;
  control: ControlBus;
  producer: TurnProducer;
}

export interface CommandInput {
  command: ParsedCommand;
  msg: InboundMessage;
  sessionKey: string;
}

/** Returns the text to answer with (null: nothing to say). */
export async function runCommand(deps: CommandDeps, { command, msg, sessionKey }: CommandInput): Promise<string | null> {
  switch (command.spec.name) {
    case 'help':
      return helpText();
    case 'stop': {
      const { wasBusy, dropped } = await stopSession(deps, sessionKey);
      if (!wasBusy && dropped === 0) return 'No active task to stop.';
      return `Stopped.${dropped > 0 ? ` Dropped ${dropped} queued message${dropped === 1 ? '' : 's'}.` : ''}`;
    }
    case 'new': {
      await stopSession(deps, sessionKey);
      const current = deps.store.currentSession(sessionKey);
      if (current && current.endedAt === null) deps.store.endSession(current.id, 'session_reset');
      return 'Started a new conversation. What can I do for you?';
    }
    case 'status':
      return statusText(deps, sessionKey);
    case 'queue': {
      if (!command.args) return 'Usage: /queue <text>';
      const res = await deps.producer.submit(sessionKey, { ...payloadFrom(msg), text: command.args }, 'queue');
      if (res.status === 'full') return `The queue is full (${res.pending - 1} waiting); nothing was queued.`;
      if (res.status === 'duplicate') return null;
      return res.busy && res.position > 1 ? `Queued (${res.position - 1} ahead of it).` : null;
    }
    default:
      return null;
  }
}

async function stopSession(deps: CommandDeps, sessionKey: string): Promise<{ wasBusy: boolean; dropped: number }> {
  const res = await deps.mailbox.stop(sessionKey);
  if (res.wasBusy) await deps.control.publish({ type: 'stop', sessionKey });
  return res;
}

async function statusText(deps: CommandDeps, sessionKey: string): Promise<string> {
  const busy = await deps.mailbox.isBusy(sessionKey);
  const pending = Math.max((await deps.mailbox.length(sessionKey)) - (busy ? 1 : 0), 0);
  const s = deps.store.currentSession(sessionKey);
  if (!s || s.endedAt !== null) return `No conversation yet.${busy ? ' A task is running.' : ''}`;
  const last = deps.store.getMessages(s.id).at(-1);
  return [
    `Session ${s.id}`,
    `Started ${ago(s.startedAt)} · last activity ${last ? ago(last.createdAt) : 'none'}`,
    `Messages ${s.messageCount} · tokens in ${s.inputTokens} / out ${s.outputTokens}`,
    `Model ${s.model ?? 'default'}`,
    busy ? `A task is running${pending ? ` (${pending} queued)` : ''}.` : 'Idle.',
  ].join('\n');
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}
