/**
 * When to compress. Two layers on purpose (as in Hermes): the loop compresses at a configurable share of the
 * window (default 50 %, using real usage), and the gateway is a safety net at 85 % before a turn starts, for
 * sessions that grew between turns. Equal thresholds would make both fire on every turn.
 */

/** The loop's default trigger, as a share of the context window. */
export const DEFAULT_THRESHOLD_RATIO = 0.5;
/** Below 10 % the loop would compress on every call; above 80 % there is no room left to write the summary. */
export const MIN_THRESHOLD_RATIO = 0.1;
export const MAX_THRESHOLD_RATIO = 0.8;
/** The tail kept verbatim may use this share of the threshold. */
export const TAIL_BUDGET_RATIO = 0.2;

export const GATEWAY_THRESHOLD_RATIO = 0.85;
/** Still this full after compressing: the user is told the conversation is nearly out of room. */
export const GATEWAY_WARNING_RATIO = 0.95;

export function clampThresholdRatio(ratio: number): number {
  if (!Number.isFinite(ratio)) return DEFAULT_THRESHOLD_RATIO;
  return Math.min(MAX_THRESHOLD_RATIO, Math.max(MIN_THRESHOLD_RATIO, ratio));
}

/** Tokens at which the loop compresses: `window × ratio`, the ratio clamped to [0.10, 0.80]. */
export function thresholdFor(window: number, ratio: number = DEFAULT_THRESHOLD_RATIO): number {
  return Math.floor(window * clampThresholdRatio(ratio));
}

/** Tokens at which the gateway compresses a session before its next turn. */
export function gatewayThreshold(window: number): number {
  return Math.floor(window * GATEWAY_THRESHOLD_RATIO);
}

export function gatewayWarningThreshold(window: number): number {
  return Math.floor(window * GATEWAY_WARNING_RATIO);
}

/** The share of the threshold the verbatim tail may take. */
export function tailBudgetFor(thresholdTokens: number): number {
  return Math.floor(thresholdTokens * TAIL_BUDGET_RATIO);
}
