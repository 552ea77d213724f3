/**
 * The tools layer: one line for each offered tool whose use is not obvious from its schema, so the model uses it
 * at the right moment. Only tools the session actually offers are named (a guidance line about a missing tool makes
 * the model call something that is not there).
 */
import { SKILL_MANAGE_TOOL, SKILL_VIEW_TOOL } from '../skills/tools.js';

const GUIDANCE: readonly (readonly [tool: string, line: string])[] = [
  ['memory', 'memory: save durable facts about the user (preferences, names, ongoing work) when they come up; not the conversation itself.'],
  ['session_search', 'session_search: look up earlier conversations when the user refers to something said before.'],
  ['todo', 'todo: keep a short task list for multi-step work and update it as you go.'],
  ['current_time', 'current_time: call it whenever the exact date or time matters; the conversation start date above is not "now".'],
  ['web_fetch', 'web_fetch: read a page the user names or that you need; say where facts came from.'],
  ['clarify', 'clarify: ask one short question when the request is ambiguous instead of guessing.'],
  ['delegate_task', 'delegate_task: hand independent sub-tasks to subagents; they do not see this conversation.'],
  ['schedule', 'schedule: set reminders and repeating jobs when the user asks for something later.'],
  [SKILL_VIEW_TOOL, 'skill_view: when a skill in the index fits the task, load it first and follow it.'],
  [SKILL_MANAGE_TOOL, 'skill_manage: after solving something reusable (a procedure, a checklist), save it as a skill; keep it short and general.'],
];

/** The guidance lines for the tools offered, in a fixed order; null when none applies. */
export function toolGuidance(toolNames: readonly string[]): string | null {
  const offered = new Set(toolNames);
  const lines = GUIDANCE.filter(([tool]) => offered.has(tool)).map(([, line]) => `- ${line}`);
  return lines.length > 0 ? lines.join('\n') : null;
}
