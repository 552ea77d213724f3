/**
 * Extended thinking for Claude, on the Anthropic API and on Bedrock: the budget comes from HERALD_THINKING_BUDGET
 * when set, else from the reasoning effort (HERALD_REASONING_EFFORT), mapped as the seeds' adapter does it, so one
 * setting asks every provider for the same depth of reasoning.
 */
import type { ProviderConfig, ReasoningEffort } from './types.js';

/** The smallest thinking budget the API takes. */
const MIN_THINKING_BUDGET = 1024;
/** Room for the answer above the thinking budget (which counts against max_tokens). */
const MIN_ANSWER_TOKENS = 1024;

/** Thinking budget (tokens) per reasoning effort; `none` leaves thinking off. */
const EFFORT_THINKING_BUDGETS: Readonly<Record<Exclude<ReasoningEffort, 'none'>, number>> = {
  minimal: 1024,
  low: 4_000,
  medium: 8_000,
  high: 16_000,
  xhigh: 32_000,
};

/** Claude 3.7 and the Claude 4 family think; earlier models refuse the `thinking` field. */
function supportsExtendedThinking(model: string): boolean {
  return /claude-3-7|claude-(?:opus|sonnet|haiku)-4|claude-4/i.test(model);
}

/**
 * The budget_tokens of each call, or undefined for thinking off. An explicit budget is taken as given (at least the
 * API's minimum); an effort turns thinking on only for models that have it, so an effort meant for OpenAI's
 * reasoning models does not break an older Claude.
 */
export function thinkingBudgetOf(cfg: Pick<ProviderConfig, 'model' | 'thinkingBudget' | 'reasoningEffort'>): number | undefined {
  if (cfg.thinkingBudget !== undefined) return Math.max(MIN_THINKING_BUDGET, cfg.thinkingBudget);
  const effort = cfg.reasoningEffort;
  if (effort === undefined || effort === 'none' || !supportsExtendedThinking(cfg.model)) return undefined;
  return EFFORT_THINKING_BUDGETS[effort];
}

/** max_tokens with the thinking budget inside it: above the budget, with room for the answer. */
export function maxTokensWithThinking(maxTokens: number, budget: number | undefined): number {
  return budget === undefined ? maxTokens : Math.max(maxTokens, budget + MIN_ANSWER_TOKENS);
}
