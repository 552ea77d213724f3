/**
 * `/remember [user|memory] <note>`: saves a note to the person's memory (the memory tool's store, in the profile's
 * notes: features/profiles/table.ts memoryKeyOf), where later turns find it. The buttons under the review's offered
 * notes stand for this command (turn/stages/review.ts), and typing it does the same: the text fallback.
 */
import { MemoryEditError, MemoryStore, type MemoryTarget } from '@herald/agent-core';
import { memoryKeyOf } from '../../features/profiles/table.js';
import type { CommandDeps, CommandInput } from './context.js';

export const REMEMBER_USAGE = 'Usage: /remember <note> — or /remember user <note> for a note about you.';

export async function rememberCommand(deps: CommandDeps, { command, msg, profile }: CommandInput): Promise<string> {
  const m = /^(?:(user|memory)\s+)?([\s\S]+)$/i.exec(command.args.trim());
  if (!m) return REMEMBER_USAGE;
  const target = (m[1]?.toLowerCase() ?? 'memory') as MemoryTarget;
  const note = m[2].trim();
  try {
    await new MemoryStore(deps.store).add(memoryKeyOf(profile, msg.platform, msg.userId), target, note);
  } catch (err) {
    if (err instanceof MemoryEditError) return `⚠️ Not saved: ${err.message}`;
    throw err;
  }
  return `💾 Saved${target === 'user' ? ' (about you)' : ''}: ${note}`;
}
