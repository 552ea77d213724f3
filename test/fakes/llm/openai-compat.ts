/**
 * Two OpenAI-compatible servers' reasoning state, modelled on their public docs, for the Chat Completions stand-in:
 * - Gemini's OpenAI endpoint (`thoughtSignatures`): the first tool call of each step carries
 *   `extra_content.google.thought_signature`; Gemini 3 refuses a request whose current turn holds a tool call without
 *   the signature it was given (400, "Function call is missing a thought_signature in functionCall parts").
 * - OpenRouter (`reasoningDetails`): reasoning also streams as `reasoning_details` (`reasoning.text` with a `signature`
 *   at the end); a Claude behind it refuses a tool loop whose assistant turn comes back without them.
 * Only the current turn (after the last user message) is checked, as Gemini documents. With `reasoningDetails`, a
 * detail signed by someone else anywhere in the history is refused as Claude refuses it (400, "Invalid `signature`").
 */
import { isRecord, randomId, splitDeltas } from './server.js';
import type { FakeOpenAIOptions, Step } from './types.js';

export interface CompatState {
  opts: FakeOpenAIOptions;
  /** Signatures handed out, by the id of the tool call they belong to. */
  issued: Map<string, string>;
}

const GEMINI_MISSING_SIGNATURE =
  'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.';
const OPENROUTER_MISSING_THINKING =
  'Provider returned error: messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.';
const REASONING_FORMAT = 'anthropic-claude-v1';

/** Gemini: the extra field of the `index`-th call of a step (the first one only), recording the signature. */
export function toolCallExtra(state: CompatState, id: string, index: number): Record<string, unknown> {
  if (!state.opts.thoughtSignatures || index !== 0) return {};
  const signature = randomId('gsig_', 24);
  state.issued.set(id, signature);
  return { extra_content: { google: { thought_signature: signature } } };
}

/** OpenRouter: the step's reasoning as `reasoning_details` deltas, the signature last (recorded for its tool calls). */
export function reasoningDetailDeltas(state: CompatState, step: Step, toolCallIds: string[]): Record<string, unknown>[] {
  if (!state.opts.reasoningDetails || step.reasoning === undefined) return [];
  const signature = randomId('orsig_', 24);
  for (const id of toolCallIds) state.issued.set(id, signature);
  const detail = (extra: Record<string, unknown>) => ({ reasoning_details: [{ type: 'reasoning.text', format: REASONING_FORMAT, index: 0, ...extra }] });
  return [...splitDeltas(step.reasoning).map((text) => detail({ text })), detail({ text: '', signature })];
}

const OPENROUTER_INVALID_SIGNATURE = 'Provider returned error: messages.1.content.0: Invalid `signature` in `thinking` block';

/** The 400 message for a current turn that lost what the server asked to get back, else undefined. */
export function compatProblem(state: CompatState, body: Record<string, unknown>): string | undefined {
  if (!state.opts.thoughtSignatures && !state.opts.reasoningDetails) return undefined;
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
  if (state.opts.reasoningDetails && messages.some((m) => hasForeignSignature(m.reasoning_details, state))) return OPENROUTER_INVALID_SIGNATURE;
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  for (const m of messages.slice(lastUser + 1)) {
    if (m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue;
    for (const tc of m.tool_calls.filter(isRecord)) {
      const wanted = state.issued.get(String(tc.id));
      if (wanted === undefined) continue;
      if (state.opts.thoughtSignatures && thoughtSignatureOf(tc) !== wanted) return GEMINI_MISSING_SIGNATURE;
      if (state.opts.reasoningDetails && !hasSignedDetail(m.reasoning_details, wanted)) return OPENROUTER_MISSING_THINKING;
    }
  }
  return undefined;
}

function thoughtSignatureOf(tc: Record<string, unknown>): unknown {
  const extra = tc.extra_content;
  const google = isRecord(extra) ? extra.google : undefined;
  return isRecord(google) ? google.thought_signature : undefined;
}

function hasForeignSignature(details: unknown, state: CompatState): boolean {
  const ours = new Set(state.issued.values());
  return Array.isArray(details) && details.some((d: unknown) => isRecord(d) && typeof d.signature === 'string' && d.signature !== '' && !ours.has(d.signature));
}

function hasSignedDetail(details: unknown, signature: string): boolean {
  return Array.isArray(details) && details.some((d: unknown) => isRecord(d) && d.type === 'reasoning.text' && d.signature === signature);
}
