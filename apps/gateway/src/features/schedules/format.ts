/**
 * How an owner sees their scheduled tasks, in the chat (/schedules) and in the `schedule` tool's answers. In a DM
 * an owner sees all their tasks on that platform; in a group, channel or thread only those made there, so a task
 * set privately is not shown to others.
 */
import type { ScheduleService, ScheduleWithNext } from './service.js';
import type { ScheduleOrigin } from './store.js';
import { describeWhen, formatTime } from './timing.js';

const PROMPT_PREVIEW_CHARS = 80;

export async function ownerSchedules(service: ScheduleService, origin: ScheduleOrigin): Promise<ScheduleWithNext[]> {
  return service.list({
    status: 'active',
    platform: origin.platform,
    ownerId: origin.ownerId,
    conversationId: origin.chatType === 'dm' ? undefined : origin.conversationId,
  });
}

function scheduleLine(s: ScheduleWithNext): string {
  const prompt = s.prompt.length > PROMPT_PREVIEW_CHARS ? `${s.prompt.slice(0, PROMPT_PREVIEW_CHARS)}…` : s.prompt;
  const next = s.nextRunAt === null ? '' : `; next ${formatTime(s.nextRunAt, s.timeZone)}`;
  return `• ${s.id} — ${describeWhen(s.when, s.timeZone)}${next} — "${prompt.replace(/\s+/g, ' ')}"`;
}

export function scheduleListText(schedules: readonly ScheduleWithNext[], where: 'dm' | 'chat'): string {
  if (schedules.length === 0) return where === 'dm' ? 'You have no scheduled tasks.' : 'You have no scheduled tasks in this chat.';
  const head = `Your scheduled tasks${where === 'dm' ? '' : ' in this chat'} (${schedules.length}):`;
  return [head, ...schedules.map(scheduleLine), 'Cancel one with /schedules cancel <id>.'].join('\n');
}
