/**
 * Folds a Chat Completions chunk stream into one assistant message. Written for the whole OpenAI-compatible
 * family, not just OpenAI: reasoning may come as `reasoning_content` (DeepSeek, vLLM) or `reasoning`
 * (OpenRouter) or inside the content as `<think>…</think>` (think-tags.ts), tool-call ids may be missing, and
 * some servers say `stop` while calling tools.
 */
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { emptyUsage, type ChatMessage, type ReasoningDetail, type ToolCall, type Usage } from '../base/types.js';
import { ReasoningDetailsAccumulator } from './reasoning-details.js';
import { ThinkTagSplitter, splitThinkTags, type SplitPiece } from './think-tags.js';
import { deterministicCallId } from './tool-call-ids.js';
import { ProviderError, type CompletionRequest, type CompletionResult, type FinishReason } from './types.js';

type Callbacks = Pick<CompletionRequest, 'onTextDelta' | 'onReasoningDelta' | 'onToolCallDelta'>;
type ChunkUsage = NonNullable<ChatCompletionChunk['usage']>;

interface PartialCall {
  id: string;
  name: string;
  args: string;
  /** Gemini's `extra_content` (the thought signature). */
  extra?: Record<string, unknown>;
}

export class ChatStreamAccumulator {
  private text = '';
  private reasoning = '';
  private readonly calls = new Map<number, PartialCall>();
  private finish: string | undefined;
  private usage: Usage = emptyUsage();
  private model: string | undefined;
  /**
   * Made at the first `<` in the content: a text without one holds no think tag (nor the start of one), so most
   * replies never run the splitter.
   */
  private thinkTags: ThinkTagSplitter | undefined;
  /** Reasoning arrived in `reasoning_content` (DeepSeek, vLLM), not `reasoning` or think tags. */
  private reasoningContent = false;
  /** OpenRouter's structured reasoning, to send back (reasoning-details.ts); made when the first piece comes. */
  private details: ReasoningDetailsAccumulator | undefined;

  constructor(private readonly callbacks: Callbacks) {}

  add(chunk: ChatCompletionChunk): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = usageFromChat(chunk.usage);
    for (const choice of chunk.choices ?? []) {
      // We never ask for n > 1; ignore anything but the first choice.
      if (choice.index !== undefined && choice.index !== 0) continue;
      const delta = choice.delta ?? {};
      const reasoning = reasoningOf(delta);
      if (reasoning) {
        if (typeof (delta as Record<string, unknown>).reasoning_content === 'string') this.reasoningContent = true;
        this.addReasoning(reasoning);
      }
      const details = (delta as Record<string, unknown>).reasoning_details;
      if (Array.isArray(details)) (this.details ??= new ReasoningDetailsAccumulator()).add(details);
      if (typeof delta.content === 'string' && delta.content !== '') this.addContent(delta.content);
      for (const tc of delta.tool_calls ?? []) this.addToolCallDelta(tc);
      if (choice.finish_reason) this.finish = choice.finish_reason;
    }
  }

  private addReasoning(text: string): void {
    this.reasoning += text;
    this.callbacks.onReasoningDelta?.(text);
  }

  private addContent(content: string): void {
    if (!this.thinkTags && !content.includes('<')) this.addPiece({ text: content, reasoning: '' });
    else this.addPiece((this.thinkTags ??= new ThinkTagSplitter()).push(content));
  }

  private addPiece(piece: SplitPiece): void {
    if (piece.reasoning) this.addReasoning(piece.reasoning);
    if (piece.text) {
      this.text += piece.text;
      this.callbacks.onTextDelta?.(piece.text);
    }
  }

  private addToolCallDelta(tc: NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number]): void {
    // Servers that omit `index` send each call whole; a new id then means a new call.
    const index =
      typeof tc.index === 'number'
        ? tc.index
        : tc.id && ![...this.calls.values()].some((c) => c.id === tc.id)
          ? this.calls.size
          : Math.max(0, this.calls.size - 1);
    const call = this.calls.get(index) ?? { id: '', name: '', args: '' };
    if (tc.id && !call.id) call.id = tc.id;
    if (tc.function?.name && !call.name) call.name = tc.function.name;
    if (tc.function?.arguments) call.args += tc.function.arguments;
    // Not in the SDK's types: Gemini's field, kept whole to be sent back.
    const extra = (tc as unknown as Record<string, unknown>).extra_content;
    if (typeof extra === 'object' && extra !== null) call.extra = { ...call.extra, ...(extra as Record<string, unknown>) };
    this.calls.set(index, call);
    this.callbacks.onToolCallDelta?.(call.name, index, call.args.length);
  }

  private reasoningDetails(requestedModel: string, hasToolCalls: boolean): Pick<ChatMessage, 'reasoning_details'> {
    const marker = this.reasoningContent && hasToolCalls ? { format: REASONING_CONTENT_FORMAT, model: this.model ?? requestedModel, data: {} } : undefined;
    return detailsOf(marker, this.details?.result(requestedModel) ?? []);
  }

  /** The finished message; throws when the stream ended before the model said it was done. */
  result(requestedModel: string): CompletionResult {
    if (this.finish === undefined) {
      throw new ProviderError('server_error', 'stream ended before the model finished (no finish_reason)');
    }
    if (this.thinkTags) this.addPiece(this.thinkTags.flush());
    // A template that opened the thinking in the prompt leaves only `</think>` in the reply (no `<`, no tag).
    const split = this.text.includes('<') ? splitThinkTags(this.text) : undefined;
    if (split?.reasoning) {
      this.text = split.text;
      this.reasoning = this.reasoning ? `${this.reasoning}\n${split.reasoning}` : split.reasoning;
    }
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c], i) => ({
        id: c.id || deterministicCallId(c.name, c.args, i),
        type: 'function',
        function: { name: c.name, arguments: c.args || '{}' },
        ...(c.extra ? { extra_content: c.extra } : {}),
      }));
    const finishReason = normaliseFinish(this.finish, toolCalls.length > 0);
    const message: ChatMessage = {
      role: 'assistant',
      content: this.text === '' && toolCalls.length > 0 ? null : this.text,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      ...this.reasoningDetails(requestedModel, toolCalls.length > 0),
      finish_reason: finishReason,
    };
    return { message, finishReason, usage: this.usage, model: this.model ?? requestedModel };
  }
}

/** DeepSeek's marker (on tool-call turns) and OpenRouter's details, when there are any. */
function detailsOf(marker: ReasoningDetail | undefined, details: ReasoningDetail[]): Pick<ChatMessage, 'reasoning_details'> {
  const all = marker ? [marker, ...details] : details;
  return all.length > 0 ? { reasoning_details: all } : {};
}

/**
 * `reasoning_details` format marking reasoning that came as `reasoning_content` with tool calls: DeepSeek's
 * thinking mode wants it back on those assistant messages in every later request (else a 400).
 */
export const REASONING_CONTENT_FORMAT = 'chat_reasoning_content';

/** Prompt tokens include the cached ones; we count them apart so cost and cache hit rate come out right. */
function usageFromChat(u: ChunkUsage): Usage {
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  // OpenRouter adds what the call cost (USD) to the usage; kept apart from the price table's estimate.
  const cost = (u as { cost?: unknown }).cost;
  return {
    input: Math.max(0, (u.prompt_tokens ?? 0) - cached),
    output: u.completion_tokens ?? 0,
    cacheRead: cached,
    cacheWrite: 0,
    ...(typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? { reportedCostUsd: cost } : {}),
  };
}

function reasoningOf(delta: object): string | undefined {
  const d = delta as Record<string, unknown>;
  if (typeof d.reasoning_content === 'string' && d.reasoning_content !== '') return d.reasoning_content;
  if (typeof d.reasoning === 'string' && d.reasoning !== '') return d.reasoning;
  return undefined;
}

function normaliseFinish(finish: string, hasToolCalls: boolean): FinishReason {
  switch (finish) {
    case 'length':
      return 'length';
    case 'content_filter':
      return 'content_filter';
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}
