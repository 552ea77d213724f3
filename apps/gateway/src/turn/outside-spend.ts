/**
 * A model call a session makes outside any turn — the memory flush of /new, /compress and the resets, the summary
 * of /compress — is priced as a turn's calls are and recorded the way an unfinished turn's are (features/budgets/meter.ts TurnSpend):
 * into the session's tokens, cost and API calls, the budgets of the session's person in its profile (platform = the
 * session's source), and the metrics (features/budgets/meter.ts). A session without a person charges no budgets.
 */
import type { Session, SessionStore } from '@herald/agent-core';
import type { ConversationServices } from '../features/sessions/services.js';
import { meterFor, TurnSpend, type SpendMeter } from '../features/budgets/meter.js';

export function spendOutsideTurn(
  store: SessionStore,
  services: ConversationServices,
  session: Session,
  /** The session the spend lands in when it is settled (a /compress moves on to its compressed child). */
  sessionId: () => string = () => session.id,
): { spend: TurnSpend; meter: SpendMeter } {
  const profile = services.profiles.get(session.profile).name;
  const spend = new TurnSpend({ store, budgets: session.userId ? services.budgets : undefined });
  const meter = spend.track(meterFor(services.pricing, profile), { profile, platform: session.source, userId: session.userId ?? '' }, sessionId);
  return { spend, meter };
}
