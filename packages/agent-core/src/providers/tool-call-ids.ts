/**
 * Ids for tool calls that came without one (OpenAI-compatible servers that omit `id`, a Bedrock block without
 * `toolUseId`). Derived from the call itself, never random: the same call at the same position gets the same id
 * on every run, so a re-run after a crash, a replayed stream and a stored history stay byte for byte the same
 * (and a provider's prompt cache keeps hitting).
 */
import { createHash } from 'node:crypto';

/** `call_` and 24 hex digits of a hash of the name, the arguments and the call's position in its reply. */
export function deterministicCallId(name: string, args: string, index: number): string {
  const digest = createHash('sha256').update(`${name}\u0000${args}\u0000${index}`).digest('hex');
  return `call_${digest.slice(0, 24)}`;
}
