/**
 * The `schedule` tool: the agent sets up a task for later ("remind me tomorrow at 9", "every Monday, summarise X"),
 * lists the user's tasks, or cancels one. It is built once per profile's tools; a call works out the chat and user
 * its turn answers from the tool context (SCHEDULE_ORIGIN_CONTEXT, turn/tools.ts): a task belongs to the person who
 * asked and delivers to the chat it was set in.
 */
import type { Tool, ToolContext } from '@herald/agent-core';
import { ownerSchedules, scheduleListText } from './format.js';
import type { ScheduleService } from './service.js';
import type { ScheduleOrigin } from './store.js';
import { formatTime } from './timing.js';

export const SCHEDULE_TOOL = 'schedule';

interface ScheduleArgs extends Record<string, unknown> {
  action?: 'create' | 'list' | 'cancel';
  prompt?: string;
  cron?: string;
  at?: string;
  in_minutes?: number;
  timezone?: string;
  session?: 'own' | 'origin';
  id?: string;
}

const DESCRIPTION = [
  'Schedule a task for later in this chat: a reminder, or a job that repeats. When it is due, its prompt is given to you',
  "as a message and your answer is posted here (by default in a conversation of its own, without this chat's history;",
  'session "origin" runs it in this conversation). Write the prompt so it makes sense on its own then, e.g. "Remind the',
  'user to call the dentist." Give exactly one of: cron (5 fields, e.g. "0 9 * * 1" = Mondays 09:00), at (a local date',
  "and time such as 2026-11-26T09:00) or in_minutes. Times are in the user's time zone unless timezone (IANA) says",
  'otherwise. action "list" shows the user\'s tasks; action "cancel" with id cancels one. The user can also send /schedules.',
].join(' ');

/** The tool-context key a turn puts its ScheduleOrigin under, as a function: worked out when the tool runs. */
export const SCHEDULE_ORIGIN_CONTEXT = 'scheduleOrigin';

function originOf(ctx: ToolContext): ScheduleOrigin {
  const origin = ctx[SCHEDULE_ORIGIN_CONTEXT];
  if (typeof origin !== 'function') throw new Error('no chat to schedule a task in: this call has no conversation');
  return (origin as () => ScheduleOrigin)();
}

function parametersFor(defaultTimeZone: string): Tool['parameters'] {
  return {
    type: 'object',
    properties: {
      action: { type: 'string', enum: ['create', 'list', 'cancel'], description: 'Default create' },
      prompt: { type: 'string', description: 'create: what to do when the task is due' },
      cron: { type: 'string', description: 'create, repeating: a 5-field cron expression' },
      at: { type: 'string', description: 'create, once: local date and time, e.g. 2026-11-26T09:00' },
      in_minutes: { type: 'number', description: 'create, once: this many minutes from now' },
      timezone: { type: 'string', description: `IANA time zone; default ${defaultTimeZone}` },
      session: { type: 'string', enum: ['own', 'origin'], description: 'Where the task runs; default own' },
      id: { type: 'string', description: 'cancel: the task id' },
    },
  };
}

export function createScheduleTool(service: ScheduleService, defaultTimeZone: string): Tool<ScheduleArgs> {
  return {
    name: SCHEDULE_TOOL,
    description: DESCRIPTION,
    parameters: parametersFor(defaultTimeZone),
    readOnly: false,
    async execute(args, ctx) {
      const origin = originOf(ctx);
      const action = args.action ?? 'create';
      const where = origin.chatType === 'dm' ? 'dm' : 'chat';
      if (action === 'list') return scheduleListText(await ownerSchedules(service, origin), where);
      if (action === 'cancel') {
        if (!args.id) throw new Error('give the id of the task to cancel (action "list" shows them)');
        const result = await service.cancel(args.id, origin);
        if (result === 'not_found') throw new Error(`the user has no task "${args.id}"`);
        return result === 'cancelled' ? `Cancelled task ${args.id}.` : `Task ${args.id} had already finished or been cancelled.`;
      }
      if (action !== 'create') throw new Error(`unknown action "${String(action)}": use create, list or cancel`);
      // A ScheduleInputError's message says what to change; the loop hands it to the model as the tool's error.
      const s = await service.create({
        origin,
        prompt: String(args.prompt ?? ''),
        cron: args.cron,
        at: args.at,
        inMinutes: args.in_minutes === undefined ? undefined : Number(args.in_minutes),
        timeZone: args.timezone,
        session: args.session,
      });
      const next = s.nextRunAt === null ? '' : ` First run: ${formatTime(s.nextRunAt, s.timeZone)}.`;
      const how = s.when.kind === 'cron' ? `repeating (cron "${s.when.cron}")` : 'once';
      return `Scheduled task ${s.id}, ${how}.${next} The answer will be posted in this chat; the user can list and cancel tasks with /schedules.`;
    },
  };
}
