/**
 * The seeds' recovery for a thinking signature the API refuses (a 400 "Invalid `signature` in `thinking` block":
 * thinking signed under another key, model or route, after a fallback or a key rotation): the request is sent once
 * more without the signed thinking (Anthropic's thinking blocks, OpenRouter's `reasoning_details`). If a tool loop is
 * in progress, Anthropic would want thinking in front of its last tool call, so that one request goes without
 * extended thinking.
 */
import type { ChatMessage } from '../base/types.js';
import { ProviderError, type CompletionRequest } from './types.js';

/** What one attempt sends: the thinking blocks of earlier replies, and the `thinking` field. */
export interface ThinkingReplay {
  thinkingBlocks: boolean;
  thinking: boolean;
}

const INVALID_SIGNATURE = /invalid\W+signature\W+in\W+thinking/i;

function isInvalidSignatureError(err: unknown): boolean {
  return err instanceof ProviderError && err.status === 400 && INVALID_SIGNATURE.test(err.message);
}

/** What a request sends that carries no signed thinking: nothing the API could refuse, so no recovery runs. */
export const NO_THINKING: ThinkingReplay = { thinkingBlocks: false, thinking: false };

/**
 * Runs `send` with the signed thinking (and, for Anthropic, extended thinking) on; on a refused signature, once
 * more without the thinking blocks. Only for a request that carries signed thinking: one that does not is sent
 * as `send(NO_THINKING)`.
 */
export async function withSignatureRecovery<T>(req: CompletionRequest, send: (replay: ThinkingReplay) => Promise<T>): Promise<T> {
  try {
    return await send({ thinkingBlocks: true, thinking: true });
  } catch (err) {
    if (!isInvalidSignatureError(err) || req.signal.aborted) throw err;
    return send({ thinkingBlocks: false, thinking: !toolLoopInProgress(req.messages) });
  }
}

/** The history ends with tool results: the model is in the middle of a tool loop. */
function toolLoopInProgress(messages: readonly ChatMessage[]): boolean {
  return messages.at(-1)?.role === 'tool';
}
