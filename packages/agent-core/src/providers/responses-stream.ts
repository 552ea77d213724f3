/**
 * Folds a Responses API event stream into one assistant message: output_text deltas, reasoning summary deltas,
 * function-call arguments per output item, reasoning items kept (encrypted) for the next call, and usage from
 * the final response.completed / response.incomplete.
 */
import type { ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import { emptyUsage, type ChatMessage, type ReasoningDetail, type ToolCall, type Usage } from '../base/types.js';
import { RESPONSES_REASONING_FORMAT } from './responses-convert.js';
import { ProviderError, type CompletionRequest, type CompletionResult, type FinishReason, type ProviderErrorKind } from './types.js';

type Callbacks = Pick<CompletionRequest, 'onTextDelta' | 'onReasoningDelta' | 'onToolCallDelta'>;

interface PartialCall {
  callId: string;
  name: string;
  args: string;
}

/** `response.failed` error codes → our kinds (the rest are the request's fault). */
const FAILURE_KINDS: Record<string, ProviderErrorKind> = {
  rate_limit_exceeded: 'rate_limit',
  server_error: 'server_error',
  vector_store_timeout: 'timeout',
  context_length_exceeded: 'context_overflow',
};

export class ResponsesStreamAccumulator {
  private text = '';
  private reasoning = '';
  private readonly calls = new Map<number, PartialCall>();
  private readonly reasoningItems: ReasoningDetail[] = [];
  private status: string | undefined;
  private incompleteReason: string | undefined;
  private usage: Usage = emptyUsage();
  private model: string | undefined;

  constructor(
    private readonly callbacks: Callbacks,
    private readonly requestedModel: string,
  ) {}

  add(ev: ResponseStreamEvent): void {
    switch (ev.type) {
      case 'response.created':
        this.model = ev.response.model;
        break;
      case 'response.output_item.added':
        if (ev.item.type === 'function_call') {
          this.calls.set(ev.output_index, { callId: ev.item.call_id, name: ev.item.name, args: ev.item.arguments ?? '' });
          this.callbacks.onToolCallDelta?.(ev.item.name, this.calls.size - 1, ev.item.arguments?.length ?? 0);
        }
        break;
      case 'response.output_text.delta':
        this.text += ev.delta;
        this.callbacks.onTextDelta?.(ev.delta);
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        this.reasoning += ev.delta;
        this.callbacks.onReasoningDelta?.(ev.delta);
        break;
      case 'response.function_call_arguments.delta': {
        const call = this.calls.get(ev.output_index);
        if (call) {
          call.args += ev.delta;
          this.callbacks.onToolCallDelta?.(call.name, [...this.calls.keys()].indexOf(ev.output_index), call.args.length);
        }
        break;
      }
      case 'response.function_call_arguments.done': {
        const call = this.calls.get(ev.output_index);
        if (call) call.args = ev.arguments;
        break;
      }
      case 'response.output_item.done':
        if (ev.item.type === 'reasoning') {
          const { id, summary, encrypted_content } = ev.item;
          if (encrypted_content) {
            this.reasoningItems.push({ format: RESPONSES_REASONING_FORMAT, model: this.requestedModel, data: { id, summary, encrypted_content } });
          }
        } else if (ev.item.type === 'function_call') {
          this.calls.set(ev.output_index, { callId: ev.item.call_id, name: ev.item.name, args: ev.item.arguments });
        }
        break;
      case 'response.completed':
      case 'response.incomplete':
        this.status = ev.response.status ?? undefined;
        this.incompleteReason = ev.response.incomplete_details?.reason ?? undefined;
        if (ev.response.usage) this.usage = usageFromResponses(ev.response.usage);
        this.model = ev.response.model || this.model;
        break;
      case 'response.failed': {
        const error = ev.response.error;
        const kind = (error && FAILURE_KINDS[error.code]) ?? 'format_error';
        throw new ProviderError(kind, `response failed: ${error?.code ?? 'unknown'}: ${error?.message ?? ''}`);
      }
      default:
        break;
    }
  }

  /** The finished message; throws when the stream ended before the response completed. */
  result(): CompletionResult {
    if (this.status === undefined) {
      throw new ProviderError('server_error', 'stream ended before the response completed (no response.completed)', { transport: true });
    }
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: c.args || '{}' } }));
    const finishReason = finishOf(this.status, this.incompleteReason, toolCalls.length > 0);
    const message: ChatMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      ...(this.reasoningItems.length > 0 ? { reasoning_details: this.reasoningItems } : {}),
      finish_reason: finishReason,
    };
    return { message, finishReason, usage: this.usage, model: this.model ?? this.requestedModel };
  }
}

/** input_tokens includes the cached (and cache-written) ones; we count them apart, as for Chat Completions. */
function usageFromResponses(u: ResponseUsage): Usage {
  const details = u.input_tokens_details as Partial<ResponseUsage.InputTokensDetails> | undefined;
  const cacheRead = details?.cached_tokens ?? 0;
  const cacheWrite = details?.cache_write_tokens ?? 0;
  return { input: Math.max(0, u.input_tokens - cacheRead - cacheWrite), output: u.output_tokens, cacheRead, cacheWrite };
}

function finishOf(status: string, reason: string | undefined, hasCalls: boolean): FinishReason {
  if (status === 'incomplete') return reason === 'content_filter' ? 'content_filter' : 'length';
  return hasCalls ? 'tool_calls' : 'stop';
}
