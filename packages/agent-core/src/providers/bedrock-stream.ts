/**
 * Folds a Bedrock ConverseStream into one assistant message: text and reasoning deltas, tool-use input JSON
 * per content block, the stop reason from messageStop and usage (with cache read / write) from metadata.
 * Exceptions sent inside the stream (throttling, modelStreamError) are thrown by the SDK's iterator as errors
 * of those names, which errors.ts classifies.
 */
import type { ConverseStreamOutput, ReasoningContentBlockDelta, TokenUsage } from '@aws-sdk/client-bedrock-runtime';
import { emptyUsage, type ChatMessage, type ReasoningDetail, type ToolCall, type Usage } from '../base/types.js';
import { deterministicCallId } from './tool-call-ids.js';
import { ProviderError, type CompletionRequest, type CompletionResult, type FinishReason } from './types.js';

type Callbacks = Pick<CompletionRequest, 'onTextDelta' | 'onReasoningDelta' | 'onToolCallDelta'>;

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

interface ToolBlock {
  id: string;
  name: string;
  json: string;
}

/** `reasoning_details` format of Claude's thinking on Bedrock: sent back, with its signature, in tool loops. */
export const BEDROCK_REASONING_FORMAT = 'bedrock';

/** One reasoning block as it streamed: its text and signature, or the redacted bytes (base64). */
interface ThinkingBlock {
  text?: string;
  signature?: string;
  redacted?: string;
}

export class ConverseStreamAccumulator {
  private text = '';
  private reasoning = '';
  private readonly tools = new Map<number, ToolBlock>();
  private readonly thinking = new Map<number, ThinkingBlock>();
  private stopReason: string | undefined;
  private usage: Usage = emptyUsage();

  constructor(private readonly callbacks: Callbacks) {}

  add(ev: ConverseStreamOutput): void {
    if (ev.contentBlockStart?.start?.toolUse) {
      const { toolUseId, name } = ev.contentBlockStart.start.toolUse;
      this.tools.set(ev.contentBlockStart.contentBlockIndex ?? this.tools.size, { id: toolUseId ?? '', name: name ?? '', json: '' });
      this.callbacks.onToolCallDelta?.(name ?? '', this.tools.size - 1, 0);
    } else if (ev.contentBlockDelta?.delta) {
      const { delta, contentBlockIndex } = ev.contentBlockDelta;
      if (delta.text !== undefined) {
        this.text += delta.text;
        this.callbacks.onTextDelta?.(delta.text);
      } else if (delta.toolUse?.input !== undefined) {
        const tool = this.tools.get(contentBlockIndex ?? -1);
        if (tool) {
          tool.json += delta.toolUse.input;
          this.callbacks.onToolCallDelta?.(tool.name, [...this.tools.keys()].indexOf(contentBlockIndex ?? -1), tool.json.length);
        }
      } else if (delta.reasoningContent) {
        this.addReasoning(contentBlockIndex ?? -1, delta.reasoningContent);
      }
    } else if (ev.messageStop) {
      this.stopReason = ev.messageStop.stopReason ?? 'end_turn';
    } else if (ev.metadata?.usage) {
      this.usage = usageFromConverse(ev.metadata.usage);
    }
  }

  /** Reasoning text streams to the user; the signature (or redacted bytes) is kept for the next request. */
  private addReasoning(index: number, delta: ReasoningContentBlockDelta): void {
    const block = this.thinking.get(index) ?? {};
    if (delta.text) {
      block.text = (block.text ?? '') + delta.text;
      this.reasoning += delta.text;
      this.callbacks.onReasoningDelta?.(delta.text);
    }
    if (delta.signature) block.signature = delta.signature;
    if (delta.redactedContent) block.redacted = Buffer.from(delta.redactedContent).toString('base64');
    this.thinking.set(index, block);
  }

  /** Signed or redacted blocks only: a block without a signature cannot be sent back. */
  private thinkingDetails(model: string): ReasoningDetail[] {
    return [...this.thinking.entries()]
      .sort(([a], [b]) => a - b)
      .filter(([, b]) => b.signature !== undefined || b.redacted !== undefined)
      .map(([, b]) => ({
        format: BEDROCK_REASONING_FORMAT,
        model,
        data: b.redacted !== undefined ? { redacted: b.redacted } : { text: b.text ?? '', signature: b.signature },
      }));
  }

  result(model: string): CompletionResult {
    if (this.stopReason === undefined) {
      throw new ProviderError('server_error', 'stream ended before the model finished (no messageStop)', { transport: true });
    }
    const toolCalls: ToolCall[] = [...this.tools.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, t], i) => ({ id: t.id || deterministicCallId(t.name, t.json, i), type: 'function', function: { name: t.name, arguments: t.json || '{}' } }));
    const mapped = FINISH_REASONS[this.stopReason] ?? 'stop';
    const finishReason: FinishReason = mapped === 'stop' && toolCalls.length > 0 ? 'tool_calls' : mapped;
    const details = this.thinkingDetails(model);
    const message: ChatMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      ...(details.length > 0 ? { reasoning_details: details } : {}),
      finish_reason: finishReason,
    };
    return { message, finishReason, usage: this.usage, model };
  }
}

/** Converse reports inputTokens without the cached ones, as Anthropic does. */
function usageFromConverse(u: TokenUsage): Usage {
  return {
    input: u.inputTokens ?? 0,
    output: u.outputTokens ?? 0,
    cacheRead: u.cacheReadInputTokens ?? 0,
    cacheWrite: u.cacheWriteInputTokens ?? 0,
  };
}
