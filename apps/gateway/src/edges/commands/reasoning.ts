/**
 * `/reasoning on|off`: shows the model's reasoning (its thinking, when the model has any) above each answer in
 * this conversation. Remembered per conversation (features/sessions/reasoning-display.ts); off by default.
 */
import type { CommandDeps, CommandInput } from './context.js';

export const REASONING_USAGE = 'Usage: /reasoning on or /reasoning off.';

export async function reasoningCommand(deps: CommandDeps, { command, sessionKey }: CommandInput): Promise<string> {
  const services = deps.conversation;
  const arg = command.args.trim().toLowerCase();
  if (arg === '') {
    return (await services.reasoning.isOn(sessionKey))
      ? "💭 Reasoning is shown: each answer starts with the model's thinking, when it has any. /reasoning off hides it."
      : "💭 Reasoning is hidden. /reasoning on shows the model's thinking above each answer.";
  }
  if (arg !== 'on' && arg !== 'off') return REASONING_USAGE;
  await services.reasoning.set(sessionKey, arg === 'on');
  return arg === 'on' ? "💭 Reasoning on: answers start with the model's thinking, when it has any." : '💭 Reasoning off.';
}
