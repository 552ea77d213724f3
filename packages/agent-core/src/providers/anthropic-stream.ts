/**
 * Folds an Anthropic Messages event stream into one assistant message: text and thinking deltas as they come,
 * tool-use input JSON assembled per content block, usage from message_start updated by message_delta. Thinking
 * blocks are also kept whole with their signatures (and redacted ones with their data) in `reasoning_details`:
 * with extended thinking on, the API wants them back, unmodified, in the tool-use turn that follows.
 */

/** `reasoning_details` format of Anthropic thinking blocks. */
export const ANTHROPIC_REASONING_FORMAT = 'anthropic';
import type { MessageDeltaUsage, RawMessageStreamEvent, Usage as WireUsage } from '@anthropic-ai/sdk/resources/messages';
import { emptyUsage, type ChatMessage, type ReasoningDetail, type ToolCall, type Usage } from '../base/types.js';
import { ProviderError, type CompletionRequest, type CompletionResult, type FinishReason } from './types.js';

type Callbacks = Pick<CompletionRequest, 'onTextDelta' | 'onReasoningDelta' | 'onToolCallDelta'>;

interface ToolBlock {
  id: string;
  name: string;
  json: string;
  /** Input given whole in content_block_start, used when no input_json_delta follows. */
  input: unknown;
}

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
};

export class MessageStreamAccumulator {
  private text = '';
  private reasoning = '';
  private readonly tools = new Map<number, ToolBlock>();
  /** Thinking blocks by content index, in the order they came. */
  private readonly thinking = new Map<number, Record<string, unknown>>();
  private stopReason: string | undefined;
  private readonly usage: Usage = emptyUsage();
  private model: string | undefined;

  constructor(private readonly callbacks: Callbacks) {}

  add(ev: RawMessageStreamEvent): void {
    switch (ev.type) {
      case 'message_start':
        this.model = ev.message.model;
        this.applyUsage(ev.message.usage);
        break;
      case 'content_block_start': {
        const b = ev.content_block;
        if (b.type === 'tool_use') {
          this.tools.set(ev.index, { id: b.id, name: b.name, json: '', input: b.input });
          this.callbacks.onToolCallDelta?.(b.name, this.tools.size - 1, 0);
        } else if (b.type === 'text' && b.text) this.appendText(b.text);
        else if (b.type === 'thinking') {
          this.thinking.set(ev.index, { type: 'thinking', thinking: b.thinking ?? '', signature: b.signature ?? '' });
          if (b.thinking) this.appendReasoning(b.thinking);
        } else if (b.type === 'redacted_thinking') this.thinking.set(ev.index, { type: 'redacted_thinking', data: b.data });
        break;
      }
      case 'content_block_delta': {
        const d = ev.delta;
        if (d.type === 'text_delta') this.appendText(d.text);
        else if (d.type === 'thinking_delta') {
          const block = this.thinking.get(ev.index);
          if (block) block.thinking = String(block.thinking ?? '') + d.thinking;
          this.appendReasoning(d.thinking);
        } else if (d.type === 'signature_delta') {
          const block = this.thinking.get(ev.index);
          if (block) block.signature = d.signature;
        } else if (d.type === 'input_json_delta') {
          const tool = this.tools.get(ev.index);
          if (tool) {
            tool.json += d.partial_json;
            this.callbacks.onToolCallDelta?.(tool.name, [...this.tools.keys()].indexOf(ev.index), tool.json.length);
          }
        }
        break;
      }
      case 'message_delta':
        if (ev.delta.stop_reason) this.stopReason = ev.delta.stop_reason;
        this.applyUsage(ev.usage);
        break;
      default:
        break;
    }
  }

  private appendText(text: string): void {
    this.text += text;
    this.callbacks.onTextDelta?.(text);
  }

  private appendReasoning(text: string): void {
    this.reasoning += text;
    this.callbacks.onReasoningDelta?.(text);
  }

  /** message_delta carries cumulative counts; null means "unchanged". */
  private applyUsage(u: Partial<WireUsage> | MessageDeltaUsage | null | undefined): void {
    if (!u) return;
    if (typeof u.input_tokens === 'number') this.usage.input = u.input_tokens;
    if (typeof u.output_tokens === 'number') this.usage.output = u.output_tokens;
    if (typeof u.cache_read_input_tokens === 'number') this.usage.cacheRead = u.cache_read_input_tokens;
    if (typeof u.cache_creation_input_tokens === 'number') this.usage.cacheWrite = u.cache_creation_input_tokens;
  }

  /** The finished message; throws when the stream ended before a stop_reason arrived. */
  result(requestedModel: string): CompletionResult {
    if (this.stopReason === undefined) {
      throw new ProviderError('server_error', 'stream ended before the model finished (no stop_reason)');
    }
    const toolCalls: ToolCall[] = [...this.tools.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, t]) => ({
        id: t.id,
        type: 'function',
        function: { name: t.name, arguments: t.json !== '' ? t.json : JSON.stringify(t.input ?? {}) },
      }));
    const mapped = FINISH_REASONS[this.stopReason] ?? 'stop';
    const finishReason: FinishReason = mapped === 'stop' && toolCalls.length > 0 ? 'tool_calls' : mapped;
    const message: ChatMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      ...(this.thinking.size > 0 ? { reasoning_details: this.thinkingDetails(requestedModel) } : {}),
      finish_reason: finishReason,
    };
    return { message, finishReason, usage: { ...this.usage }, model: this.model ?? requestedModel };
  }

  private thinkingDetails(requestedModel: string): ReasoningDetail[] {
    return [...this.thinking.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, data]) => ({ format: ANTHROPIC_REASONING_FORMAT, model: this.model ?? requestedModel, data }));
  }
}
