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

/**
 * Runs `send` with the thinking as configured; on a refused signature, once more without the thinking blocks.
 * `thinking`: the request carries signed thinking (and, for Anthropic, extended thinking is on).
 */
export async function withSignatureRecovery<T>(req: CompletionRequest, thinking: boolean, send: (replay: ThinkingReplay) => Promise<T>): Promise<T> {
  try {
    return await send({ thinkingBlocks: thinking, thinking });
  } catch (err) {
    if (!thinking || !isInvalidSignatureError(err) || req.signal.aborted) throw err;
    return send({ thinkingBlocks: false, thinking: !toolLoopInProgress(req.messages) });
  }
}

/** The history ends with tool results: the model is in the middle of a tool loop. */
function toolLoopInProgress(messages: readonly ChatMessage[]): boolean {
  return messages.at(-1)?.role === 'tool';
}
