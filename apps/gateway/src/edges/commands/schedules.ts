/**
 * /schedules: the user's scheduled tasks (in a DM all of theirs on this platform, elsewhere those set in this chat),
 * and `/schedules cancel <id>` to cancel one of theirs.
 */
import { ownerSchedules, scheduleListText } from '../../features/schedules/format.js';
import { scheduleOrigin } from '../../features/schedules/store.js';
import type { CommandDeps, CommandInput } from './context.js';

export async function schedulesCommand(deps: CommandDeps, { command, msg, sessionKey }: CommandInput): Promise<string> {
  const origin = scheduleOrigin(msg, sessionKey);
  const [verb, id, ...rest] = command.args.split(/\s+/).filter(Boolean);
  if (verb === undefined || verb === 'list') return scheduleListText(await ownerSchedules(deps.schedules, origin), msg.chatType === 'dm' ? 'dm' : 'chat');
  if (verb !== 'cancel' || !id || rest.length > 0) return 'Usage: /schedules — list your scheduled tasks; /schedules cancel <id> — cancel one.';
  switch (await deps.schedules.cancel(id, origin)) {
    case 'cancelled':
      return `🗑 Cancelled scheduled task ${id}.`;
    case 'not_active':
      return `Task ${id} has already finished or been cancelled.`;
    case 'not_found':
      return `You have no scheduled task "${id}". Send /schedules to see yours.`;
  }
}
