/**
 * Chat Completions provider: OpenAI itself or any OpenAI-compatible server (vLLM, Ollama, llama.cpp,
 * OpenRouter, DeepSeek), the default `openai:` prefix or a named endpoint (`openrouter:`). The internal messages
 * are already OpenAI-shaped, so conversion only strips our own fields and prepends the system prompt.
 *
 * The answer streams back as chunks, folded into one assistant message here too (ChatStreamAccumulator, at the end).
 * Written for the whole OpenAI-compatible family, not just OpenAI: reasoning may come as `reasoning_content`
 * (DeepSeek, vLLM) or `reasoning` (OpenRouter) or inside the content as `<think>…</think>` (think-tags.ts), tool-call
 * ids may be missing, and some servers say `stop` while calling tools.
 */
import OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { emptyUsage, type ChatMessage, type ReasoningDetail, type ToolCall, type Usage } from '../base/types.js';
import { supportsVision } from './models.js';
import { isOpenAIHost, latestOwnText, withChatCacheMarkers, wantsCacheMarkers } from './openai-cache.js';
import { ReasoningDetailsAccumulator, replayedDetails } from './reasoning-details.js';
import { NO_THINKING, withSignatureRecovery, type ThinkingReplay } from './signature-recovery.js';
import { isReasoningModel } from './responses-convert.js';
import { ClientPool, keySourceOf, runProviderRequest } from './request.js';
import { ThinkTagSplitter, splitThinkTags, type SplitPiece } from './think-tags.js';
import { deterministicCallId } from './tool-call-ids.js';
import { dataUrl, toolImages, toolImagesCaption, toolResultText } from './tool-images.js';
import { createTransport } from './transport.js';
import {
  ProviderError,
  type CompletionRequest,
  type CompletionResult,
  type FinishReason,
  type Provider,
  type ProviderConfig,
  type ToolSchema,
} from './types.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/**
 * `reasoning_details` format marking reasoning that came as `reasoning_content` with tool calls: DeepSeek's
 * thinking mode wants it back on those assistant messages in every later request (else a 400).
 */
const REASONING_CONTENT_FORMAT = 'chat_reasoning_content';

/** One OpenAI SDK client per key, each on its own connection pool; SDK retries off (the loop owns retries). */
export function openAIClients(cfg: ProviderConfig, baseURL: string): ClientPool<OpenAI> {
  return new ClientPool((key) => {
    const transport = createTransport();
    const client = new OpenAI({ apiKey: key.key, baseURL, maxRetries: 0, timeout: cfg.timeoutMs, fetch: transport.fetch });
    return { client, retire: transport.retire };
  });
}

export function createOpenAIProvider(cfg: ProviderConfig): Provider {
  const baseURL = cfg.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const clients = openAIClients(cfg, baseURL);
  const keys = keySourceOf(cfg);
  // OpenAI's reasoning models reject `max_tokens`; most compatible servers only understand `max_tokens`.
  const maxTokensField = isOpenAIHost(baseURL) ? 'max_completion_tokens' : 'max_tokens';
  const vision = cfg.vision ?? supportsVision(cfg.model);
  // prompt_cache_key is OpenAI's; strict compatible servers reject fields they do not know.
  const sendsCacheKey = cfg.provider === 'openai' || isOpenAIHost(baseURL);
  const cacheMarkers = wantsCacheMarkers(cfg, baseURL);
  // OpenAI rejects reasoning_effort for models that do not reason; other servers decide for themselves.
  // DeepSeek's thinking mode wants reasoning_content back on tool-call turns; OpenAI has no such field.
  const replaysReasoning = !isOpenAIHost(baseURL);
  const sendsEffort = cfg.reasoningEffort !== undefined && (isReasoningModel(cfg.model) || !isOpenAIHost(baseURL));
  const maxTokens = (asked: number | undefined): number | undefined => asked ?? cfg.maxTokens;

  return {
    name: cfg.provider,
    model: cfg.model,
    apiMode: 'chat_completions',
    vision,
    ...(cfg.maxTokens === undefined ? {} : { maxTokens: cfg.maxTokens }),
    complete: (req) => {
      const send = (replay: ThinkingReplay): Promise<CompletionResult> =>
        runProviderRequest(cfg, keys, clients, req.signal, async (client, guard) => {
          const replayTo = replaysReasoning ? { model: cfg.model, details: replay.thinkingBlocks } : undefined;
          const messages = toChatMessages(req.systemPrompt, req.messages, vision, replayTo);
          const params: ChatCompletionCreateParamsStreaming = {
            model: cfg.model,
            messages: cacheMarkers ? withChatCacheMarkers(req.systemPrompt, messages, latestOwnText(req.messages)) : messages,
            ...(req.tools.length > 0 ? { tools: req.tools.map(toChatTool) } : {}),
            ...(req.tools.length > 0 && req.toolChoice === 'none' ? { tool_choice: 'none' as const } : {}),
            ...(maxTokens(req.maxTokens) === undefined ? {} : { [maxTokensField]: maxTokens(req.maxTokens) }),
            ...(sendsCacheKey && req.cacheKey ? { prompt_cache_key: req.cacheKey } : {}),
            ...(sendsEffort ? { reasoning_effort: cfg.reasoningEffort } : {}),
            stream: true,
            stream_options: { include_usage: true },
          };
          const stream = await client.chat.completions.create(params, guard.sdkOptions);
          const acc = new ChatStreamAccumulator(req);
          for await (const chunk of stream) {
            guard.touch();
            acc.add(chunk);
          }
          return acc.result(cfg.model);
        });
      // A signature the server refuses (OpenRouter's details after a key or route change): once more without the details.
      return replaysReasoning && hasReplayedDetails(req.messages, cfg.model) ? withSignatureRecovery(req, send) : send(NO_THINKING);
    },
  };
}

/**
 * The system prompt first, then the history with only the fields the API knows. A user message's images become
 * `image_url` parts with a data URL after its text; `vision` false leaves them out (their text notes stay). Tool
 * messages are text only, so the images tools returned follow the last of a run of tool results, in one user
 * message that names the call each came from (tool-images.ts).
 * `replayTo` (a compatible server's model, not OpenAI's): the reasoning state that server asked to get back goes with
 * each assistant message (`withReplayedReasoning`, below).
 */
export function toChatMessages(systemPrompt: string, messages: ChatMessage[], vision = true, replayTo?: ReplayTarget): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [];
  if (systemPrompt !== '') out.push({ role: 'system', content: systemPrompt });
  let shown: ChatCompletionContentPart[] = [];
  messages.forEach((m, i) => {
    const message = toChatMessage(m, vision);
    out.push(replayTo === undefined ? message : withReplayedReasoning(message, m, replayTo));
    if (m.role !== 'tool') return;
    const images = toolImages(m, vision);
    if (images.length > 0) {
      shown.push({ type: 'text', text: toolImagesCaption(m) });
      for (const img of images) shown.push({ type: 'image_url', image_url: { url: dataUrl(img) } });
    }
    if (messages[i + 1]?.role !== 'tool' && shown.length > 0) {
      out.push({ role: 'user', content: shown });
      shown = [];
    }
  });
  return out;
}

function toChatMessage(m: ChatMessage, vision: boolean): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
      return { role: 'system', content: m.content ?? '' };
    case 'user': {
      if (!vision || !m.images?.length) return { role: 'user', content: m.content ?? '' };
      const parts: ChatCompletionContentPart[] = m.content ? [{ type: 'text', text: m.content }] : [];
      for (const img of m.images) parts.push({ type: 'image_url', image_url: { url: dataUrl(img) } });
      return { role: 'user', content: parts };
    }
    case 'tool':
      return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: toolResultText(m, vision) };
    case 'assistant': {
      if (!m.tool_calls?.length) return { role: 'assistant', content: m.content ?? '' };
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.tool_calls.map((tc) => ({
          id: tc.id,
          type: 'function',
          function: { name: tc.function.name, arguments: tc.function.arguments },
        })),
      };
    }
  }
}

/**
 * Each schema's wire form, made once and sent with every call that offers the tool: the loop's schemas are built once
 * per tool and shared (tools/registry.ts), so this was the same few objects made again for every request. Checked
 * against the schema's fields, in case one is changed after its first call.
 */
const chatTools = new WeakMap<ToolSchema, ChatCompletionTool & { type: 'function' }>();

function toChatTool(t: ToolSchema): ChatCompletionTool {
  const known = chatTools.get(t);
  if (known && known.function.name === t.name && known.function.description === t.description && known.function.parameters === t.parameters) return known;
  const tool = { type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters } };
  chatTools.set(t, tool);
  return tool;
}

/*
 * The reasoning state OpenAI-compatible servers hand out and want back on later requests, in their own fields (not
 * in the SDK's types): DeepSeek's `reasoning_content` on tool-call turns, OpenRouter's `reasoning_details`, and
 * Gemini's `extra_content` (the thought signature) on each tool call. Never sent to OpenAI itself.
 */

/** Who the request goes to, and whether OpenRouter's details go too (not on the retry after a refused signature). */
export interface ReplayTarget {
  model: string;
  details: boolean;
}

/** Some message of the history carries details `model` would get back. */
function hasReplayedDetails(messages: readonly ChatMessage[], model: string): boolean {
  // A history without details (the usual one) never reaches the details' own code.
  return messages.some((m) => m.role === 'assistant' && m.reasoning_details !== undefined && replayedDetails(m.reasoning_details, model).length > 0);
}

/** `message` (the wire form of `m`) with what the server gave `m` for the target's model to send back. */
function withReplayedReasoning(message: ChatCompletionMessageParam, m: ChatMessage, target: ReplayTarget): ChatCompletionMessageParam {
  if (m.role !== 'assistant') return message;
  const extra: Record<string, unknown> = {};
  if (m.reasoning && m.reasoning_details?.some((d) => d.format === REASONING_CONTENT_FORMAT)) extra.reasoning_content = m.reasoning;
  const details = target.details && m.reasoning_details !== undefined ? replayedDetails(m.reasoning_details, target.model) : [];
  if (details.length > 0) extra.reasoning_details = details;
  if ('tool_calls' in message && message.tool_calls && m.tool_calls?.some((tc) => tc.extra_content)) {
    extra.tool_calls = message.tool_calls.map((tc, i) => {
      const own = m.tool_calls?.[i]?.extra_content;
      return own ? { ...tc, extra_content: own } : tc;
    });
  }
  return Object.assign(message, extra);
}

type Callbacks = Pick<CompletionRequest, 'onTextDelta' | 'onReasoningDelta' | 'onToolCallDelta'>;
type ChunkUsage = NonNullable<ChatCompletionChunk['usage']>;

interface PartialCall {
  id: string;
  name: string;
  args: string;
  /** Gemini's `extra_content` (the thought signature). */
  extra?: Record<string, unknown>;
}

class ChatStreamAccumulator {
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
