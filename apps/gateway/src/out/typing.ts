/**
 * "typing…" requests, sent without waiting and bounded per platform client: past MAX_TYPING_IN_FLIGHT requests still
 * on their way, a refresh is skipped (the turn's next refresh tries again). A burst of thousands of turns would
 * otherwise queue thousands of indicators on the client's connection pool, ahead of the replies themselves — which
 * clear an indicator anyway — and hold their memory meanwhile.
 */
import type { PlatformEgress } from '@herald/adapters';

export const MAX_TYPING_IN_FLIGHT = 64;

const inFlight = new WeakMap<PlatformEgress, number>();

/** Shows "typing…" in the conversation unless this client already has MAX_TYPING_IN_FLIGHT such requests out; failures are ignored. */
export function sendTyping(egress: PlatformEgress, conversationId: string): void {
  const n = inFlight.get(egress) ?? 0;
  if (n >= MAX_TYPING_IN_FLIGHT) return;
  inFlight.set(egress, n + 1);
  void egress
    .typing(conversationId)
    .catch(() => undefined)
    .finally(() => inFlight.set(egress, (inFlight.get(egress) ?? 1) - 1));
}
