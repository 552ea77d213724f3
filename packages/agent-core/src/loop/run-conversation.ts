/**
 * The agent loop. Prologue (sanitise, set up), a `while` that branches on the finish reason
 * (tool_calls → run tools and loop; length → continue; stop → done), epilogue (turn_end). Retries, fallback,
 * tool execution and history repair are named functions in their own modules.
 */
import { randomUUID } from 'node:crypto';
import type { ChatMessage, ToolCall } from '../base/types.js';
import type { CompletionResult, FinishReason, ToolSchema } from '../providers/types.js';
import { checkAvailability, toolSchemas, type Tool } from '../tools/registry.js';
import { LoopCompressor } from '../compression/loop-compressor.js';
import { estimateTextTokens } from '../compression/tokens.js';
import { effectiveContextWindow } from '../compression/windows.js';
import { DEFAULT_MAX_ITERATIONS, IterationBudget, budgetNote, contextNote } from './budget.js';
import { ModelCaller } from './call-model.js';
import { executeToolCalls, hasInvalidArguments, prepareToolCalls } from './execute-tools.js';
import { FallbackState } from '../providers/fallback.js';
import { DEFAULT_RETRY_POLICY, toProviderError } from '../providers/retry.js';
import { sanitizeText, Transcript } from './transcript.js';
import type { AgentEvent, ConversationOptions, ConversationResult } from './types.js';

export const MAX_CONTINUATIONS = 3;
export const CONTINUE_PROMPT = 'continue exactly where you left off';
/** Re-asks after a response whose tool arguments are not valid JSON, before answering with error results. */
export const MAX_INVALID_JSON_RETRIES = 2;
/** The response in a turn that calls an unknown tool for this many times ends the turn. */
export const MAX_UNKNOWN_TOOL_RESPONSES = 3;
export const BUDGET_SUMMARY_PROMPT =
  'You have used all the tool iterations for this request. Do not call any more tools. ' +
  'Reply to me now: summarise what you did, what you found, and what is left to do.';

export const PARTIAL_THINKING_EXHAUSTED = 'thinking budget exhausted';
export const PARTIAL_OUTPUT_LIMIT = 'output length limit reached';
export const PARTIAL_BUDGET_EXHAUSTED = 'iteration budget exhausted';
export const PARTIAL_UNKNOWN_TOOLS = 'model kept calling unknown tools';
export const PARTIAL_CONTENT_FILTER = 'content filtered';
export const PARTIAL_TRUNCATED_TOOL_CALL = 'tool call cut off by the output limit';
/** Replies cut off inside a tool call before the turn gives up: the first asks again with more room, then the model is told. */
const MAX_TRUNCATED_TOOL_CALLS = 3;
export const TRUNCATED_TOOL_CALL_PROMPT =
  'Your last reply was cut off by the output length limit while you were writing a tool call, so the call was not made. ' +
  'Make it again with much shorter arguments, or split the work into several smaller calls.';
/** Empty replies (nothing, or only thinking) the loop asks again about before it accepts one. */
const MAX_EMPTY_REPLY_NUDGES = 2;
export const EMPTY_REPLY_PROMPT = 'You did not write a reply. Answer me now, based on the work above.';
export const THINKING_ONLY_PROMPT = 'You only thought about it and wrote no reply. Write your answer to me now.';
/** Stands for the cut-off reply in the request that tells the model about it (never stored). */
const CUT_OFF_REPLY = '[reply cut off by the output limit]';

/** How the while loop ended; the epilogue turns it into a ConversationResult. */
interface Outcome {
  finalResponse: string;
  completed: boolean;
  interrupted?: boolean;
  partial?: string;
  error?: ConversationResult['error'];
}

/** What one model reply leads to: another request (`next`), or the end of the loop. */
type StepResult = Outcome | 'next';

const INTERRUPTED: Outcome = { finalResponse: '', completed: false, interrupted: true };

export async function runConversation(opts: ConversationOptions): Promise<ConversationResult> {
  const run = new ConversationRun(opts);
  run.start();
  const outcome = await run.loop().catch((err: unknown) => run.failed(err));
  return run.finish(outcome);
}

/** One run of the loop: what the prologue set up, the counters the finish reasons keep, and a method per reason. */
class ConversationRun {
  private readonly signal: AbortSignal;
  private readonly emit: (event: AgentEvent) => void;
  private readonly budget: IterationBudget;
  private readonly unavailable: { name: string; reason: string }[];
  private readonly tools: Tool[];
  /** Made when the model first calls a tool: most turns never do. */
  private toolsByNameMade: Map<string, Tool> | null = null;
  private readonly schemas: ToolSchema[];
  private readonly compressor: LoopCompressor | undefined;
  private readonly caller: ModelCaller;
  private readonly transcript: Transcript;
  private readonly userMessage: string;
  /** Given to every tool call of the run, so tools keep per-task state apart (the seeds' task_id). */
  private readonly toolContext: Record<string, unknown>;
  private readonly taskId: string;
  /** Text of a reply cut by the length limit, collected across continuations. */
  private readonly parts: string[] = [];
  private invalidJsonRetries = 0;
  private unknownToolResponses = 0;
  private truncatedToolCalls = 0;
  private raisedForThinking = false;
  private emptyNudges = 0;
  private iteration = 0;

  constructor(private readonly opts: ConversationOptions) {
    const systemPrompt = opts.ephemeralSystemPrompt ? `${opts.systemPrompt}\n\n${opts.ephemeralSystemPrompt}` : opts.systemPrompt;
    this.signal = opts.signal ?? new AbortController().signal;
    this.taskId = opts.taskId ?? randomUUID();
    this.toolContext = { ...opts.toolContext, taskId: this.taskId };
    this.emit = safeEmitter(opts.onEvent);
    this.budget = opts.budget ?? new IterationBudget(opts.maxIterations ?? DEFAULT_MAX_ITERATIONS);
    const { tools, unavailable } = checkAvailability(opts.tools ?? []);
    this.unavailable = unavailable;
    this.tools = tools;
    this.schemas = toolSchemas(tools);
    // Opt-in; built before the caller, whose context-overflow hook it provides (it reads the caller lazily).
    this.compressor = opts.compression
      ? new LoopCompressor({ options: opts.compression, caller: () => this.caller, systemPrompt, signal: this.signal, emit: this.emit })
      : undefined;
    this.caller = new ModelCaller({
      providers: [opts.provider, ...(opts.fallbacks ?? [])],
      fallbackState: opts.fallbackState ?? new FallbackState(),
      policy: { ...DEFAULT_RETRY_POLICY, ...opts.retry },
      signal: this.signal,
      systemPrompt,
      maxTokens: opts.maxTokens,
      cacheKey: opts.cacheKey,
      onContextOverflow: opts.onContextOverflow ?? this.compressor?.onContextOverflow,
      ...(this.compressor ? { onColdCache: this.compressor.onColdCache } : {}),
      emit: this.emit,
    });
    // A re-run after a crash continues from what the first run saved (its user message first).
    const [saved, ...savedRest] = opts.resume ?? [];
    this.userMessage = saved?.content ?? sanitizeText(opts.userMessage);
    this.transcript = new Transcript(opts.history, saved ?? { role: 'user', content: this.userMessage, ...userMediaOf(opts) }, opts.requestContext);
    this.transcript.append(...savedRest);
  }

  private get toolsByName(): Map<string, Tool> {
    this.toolsByNameMade ??= new Map<string, Tool>(this.tools.map((t) => [t.name, t]));
    return this.toolsByNameMade;
  }

  /** Prologue: the turn starts, and the tools that cannot be offered are named. */
  start(): void {
    this.emit({ type: 'turn_start', model: this.caller.model, userMessage: this.userMessage });
    for (const { name, reason } of this.unavailable) {
      this.emit({ type: 'status', kind: 'info', message: `tool ${name} unavailable: ${reason}` });
    }
  }

  /** The while loop: a model request per iteration, branching on its finish reason. */
  async loop(): Promise<Outcome> {
    const { transcript, caller, budget, signal } = this;
    await this.compressor?.preflight(transcript, this.schemas);
    while (!signal.aborted) {
      if (!budget.consume()) return summariseAfterBudget(caller, transcript, this.schemas);
      this.emit({ type: 'step', iteration: ++this.iteration, remaining: budget.remaining });
      const window = this.compressor?.window ?? effectiveContextWindow(caller.provider.model, this.opts.compression?.contextWindow);
      transcript.setNotes(pressureNotes(budget, caller.lastPromptTokens, window));
      const reply = await caller.complete(transcript, this.schemas);
      // A provider that finished despite the abort: the user has moved on, so its reply is dropped.
      if (signal.aborted) break;
      const step = await this.step(reply);
      if (step !== 'next') return step;
    }
    return INTERRUPTED;
  }

  private step(reply: CompletionResult): StepResult | Promise<StepResult> {
    const finish = finishReasonOf(reply);
    if (finish === 'tool_calls') return this.toolCalls(reply);
    if (finish === 'length' && (reply.message.tool_calls?.length ?? 0) > 0) return this.cutInsideToolCall(reply);
    if (finish === 'length') return this.cutByLength(reply);
    // An empty reply (nothing after tool results, or only thinking): the next model of the chain gets the same
    // request at once; on the last one, ask for the answer rather than end mute.
    if (finish === 'stop' && !reply.message.content?.trim() && this.parts.length === 0) {
      if (this.caller.fallBackAfterEmptyReply()) return 'next';
      if (this.emptyNudges < MAX_EMPTY_REPLY_NUDGES) {
        this.emptyNudges += 1;
        const nudge = reply.message.reasoning?.trim() ? THINKING_ONLY_PROMPT : EMPTY_REPLY_PROMPT;
        this.transcript.appendScaffold({ role: 'user', content: nudge });
        return 'next';
      }
    }
    // stop (or content_filter): the reply is final.
    const message = assistantMessage(reply, takeParts(this.parts, this.transcript));
    this.transcript.append(message);
    const filtered = finish === 'content_filter' ? { partial: PARTIAL_CONTENT_FILTER } : {};
    return { finalResponse: message.content ?? '', completed: finish === 'stop', ...filtered };
  }

  /** tool_calls: run them, keep their results, and ask again. */
  private async toolCalls(reply: CompletionResult): Promise<StepResult> {
    const { transcript, signal, emit, opts } = this;
    const calls = reply.message.tool_calls ?? [];
    if (hasInvalidArguments(calls) && this.invalidJsonRetries < MAX_INVALID_JSON_RETRIES) {
      this.invalidJsonRetries += 1; // ask again without keeping the malformed response
      return 'next';
    }
    this.invalidJsonRetries = 0;
    const batch = prepareToolCalls(calls, this.toolsByName);
    const assistant = assistantMessage(reply, takeParts(this.parts, transcript), batch.calls);
    transcript.append(assistant);
    if (assistant.content?.trim()) emit({ type: 'interim_text', text: assistant.content });
    const results = await executeToolCalls(batch, { signal, toolContext: this.toolContext, emit, hooks: opts.toolHooks });
    transcript.append(...results);
    if (signal.aborted) return INTERRUPTED;
    if (batch.unknownNames.length > 0 && ++this.unknownToolResponses >= MAX_UNKNOWN_TOOL_RESPONSES) {
      return { finalResponse: reply.message.content ?? '', completed: false, partial: PARTIAL_UNKNOWN_TOOLS };
    }
    appendSteering(transcript, opts.getSteerMessages);
    await checkpoint(transcript, opts.onCheckpoint, emit);
    await this.compressor?.afterToolBatch(transcript, this.schemas, this.caller.lastPromptTokens, [assistant, ...results]);
    return 'next';
  }

  /**
   * length inside a tool call: its arguments are incomplete, so the call cannot run. More room first, then tell the
   * model; the cut-off reply is never stored.
   */
  private cutInsideToolCall(reply: CompletionResult): StepResult {
    const { transcript } = this;
    this.truncatedToolCalls += 1;
    if (this.truncatedToolCalls === 1 && this.caller.raiseOutputLimit()) return 'next';
    if (this.truncatedToolCalls < MAX_TRUNCATED_TOOL_CALLS) {
      this.emit({ type: 'status', kind: 'retry', message: 'reply cut off inside a tool call; asking the model to make it again' });
      const before = reply.message.content?.trim() ? reply.message.content : CUT_OFF_REPLY;
      transcript.appendScaffold({ role: 'assistant', content: before }, { role: 'user', content: TRUNCATED_TOOL_CALL_PROMPT });
      return 'next';
    }
    const finalResponse = takeParts(this.parts, transcript) + (reply.message.content ?? '');
    if (finalResponse.trim()) transcript.append({ role: 'assistant', content: finalResponse, finish_reason: 'length' });
    return { finalResponse, completed: false, partial: PARTIAL_TRUNCATED_TOOL_CALL };
  }

  /**
   * length: continue the reply (up to MAX_CONTINUATIONS times), compressing first when the request is near the
   * window; or keep what came.
   */
  private async cutByLength(reply: CompletionResult): Promise<StepResult> {
    const { transcript, parts } = this;
    const text = reply.message.content ?? '';
    const thinkingOnly = text.trim() === '';
    // Only reasoning before the limit: once, the same request with more room for the answer.
    if (thinkingOnly && parts.length === 0 && !this.raisedForThinking) {
      this.raisedForThinking = true;
      if (this.caller.raiseOutputLimit()) return 'next';
    }
    if (!thinkingOnly && parts.push(text) <= MAX_CONTINUATIONS) {
      // Compression drops the scaffold: the parts so far go back as one reply to continue.
      const output = Math.max(reply.usage.output, estimateTextTokens(text));
      const compressed = await this.compressor?.beforeContinuation(transcript, this.schemas, this.caller.lastPromptTokens, output);
      transcript.appendScaffold({ role: 'assistant', content: compressed ? parts.join('') : text }, { role: 'user', content: CONTINUE_PROMPT });
      return 'next';
    }
    // Only reasoning (or nothing) before the limit, or still cut after every continuation: keep what came.
    const finalResponse = takeParts(parts, transcript);
    if (finalResponse) transcript.append({ role: 'assistant', content: finalResponse, finish_reason: 'length' });
    const partial = thinkingOnly ? PARTIAL_THINKING_EXHAUSTED : PARTIAL_OUTPUT_LIMIT;
    return { finalResponse, completed: false, partial };
  }

  /** The loop threw: an interrupted turn ends quietly, a failed one with what it said so far and the error. */
  failed(err: unknown): Outcome {
    if (this.signal.aborted) return INTERRUPTED;
    const { kind, message } = toProviderError(err);
    // A continuation that failed: the history rolls back to the last complete message (the parts were never
    // stored), but the user still gets the text that came before the failure.
    const finalResponse = takeParts(this.parts, this.transcript);
    return { finalResponse, completed: false, partial: kind, error: { kind, message } };
  }

  /** Epilogue. A turn that wrote no final text still answers with the last thing it said before its tools ran. */
  finish(outcome: Outcome): ConversationResult {
    const { caller, transcript } = this;
    const result: ConversationResult = {
      finalResponse: outcome.finalResponse.trim() !== '' || outcome.interrupted ? outcome.finalResponse : lastInterimText(transcript.newMessages),
      newMessages: transcript.newMessages,
      usage: { ...caller.usage },
      apiCalls: caller.apiCalls,
      completed: outcome.completed,
      interrupted: outcome.interrupted ?? false,
      model: caller.model,
      taskId: this.taskId,
    };
    if (outcome.partial !== undefined) result.partial = outcome.partial;
    if (outcome.error !== undefined) result.error = outcome.error;
    if (caller.lastPromptTokens !== undefined) result.lastPromptTokens = caller.lastPromptTokens;
    if (transcript.compactedHistory !== undefined) result.compactedHistory = transcript.compactedHistory;
    this.emit({ type: 'turn_end', result });
    return result;
  }
}

/**
 * Some servers report `stop` with tool calls, or `tool_calls` with none; what the message holds decides. `length`
 * with calls whose arguments all parse was cut off after them: they can run.
 */
function finishReasonOf(reply: CompletionResult): FinishReason {
  const calls = reply.message.tool_calls ?? [];
  const hasCalls = calls.length > 0;
  if (reply.finishReason === 'length') return hasCalls && !hasInvalidArguments(calls) ? 'tool_calls' : 'length';
  if (hasCalls) return 'tool_calls';
  return reply.finishReason === 'tool_calls' ? 'stop' : reply.finishReason;
}

/** Joins the parts of a continued reply (they become one persisted message) and drops their scaffold. */
function takeParts(parts: string[], transcript: Transcript): string {
  const text = parts.join('');
  parts.length = 0;
  transcript.clearScaffold();
  return text;
}

/** The reply as it goes into history, with earlier continuation parts in front of its text. */
function assistantMessage(reply: CompletionResult, before: string, calls?: ToolCall[]): ChatMessage {
  const message: ChatMessage = { role: 'assistant', content: before + (reply.message.content ?? '') };
  if (message.content === '' && calls) message.content = null;
  if (calls && calls.length > 0) message.tool_calls = calls;
  if (reply.message.reasoning) message.reasoning = reply.message.reasoning;
  if (reply.message.reasoning_details) message.reasoning_details = reply.message.reasoning_details;
  message.finish_reason = calls ? 'tool_calls' : reply.finishReason;
  return message;
}

/** Saves the turn so far (incremental persistence); a failed save is reported and the turn goes on. */
async function checkpoint(transcript: Transcript, save: ConversationOptions['onCheckpoint'], emit: (event: AgentEvent) => void): Promise<void> {
  if (!save || transcript.compactedHistory !== undefined) return;
  try {
    await save(transcript.newMessages);
  } catch (err) {
    emit({ type: 'status', kind: 'info', message: `could not save the turn so far: ${err instanceof Error ? err.message : String(err)}` });
  }
}

/** The budget and context notes for the next call (they ride on the last tool result only). */
function pressureNotes(budget: IterationBudget, lastPromptTokens: number | undefined, window: number): string[] {
  return [budgetNote(budget), contextNote(lastPromptTokens, window)].filter((n): n is string => n !== undefined);
}

function appendSteering(transcript: Transcript, getSteerMessages: (() => string[]) | undefined): void {
  const texts = (getSteerMessages?.() ?? []).map(sanitizeText).filter((t) => t.trim() !== '');
  if (texts.length > 0) transcript.append({ role: 'user', content: texts.join('\n\n') });
}

/** The budget is spent: one call without tools asks the model to wrap up, so the user still gets an answer. */
/**
 * One last call that must answer in text. The tools are still described with tool_choice 'none': Anthropic
 * rejects a request whose history holds tool_use/tool_result blocks but defines no tools.
 */
async function summariseAfterBudget(caller: ModelCaller, transcript: Transcript, schemas: ToolSchema[]): Promise<Outcome> {
  transcript.appendScaffold({ role: 'user', content: BUDGET_SUMMARY_PROMPT });
  const reply = await caller.complete(transcript, schemas, 'none');
  transcript.clearScaffold();
  const finalResponse = reply.message.content ?? '';
  if (finalResponse) transcript.append({ role: 'assistant', content: finalResponse, finish_reason: reply.finishReason });
  return { finalResponse, completed: false, partial: PARTIAL_BUDGET_EXHAUSTED };
}

/** The text of the turn's last assistant message that had some (written before tool calls), or ''. */
function lastInterimText(messages: readonly ChatMessage[]): string {
  const said = messages.findLast((m) => m.role === 'assistant' && m.content?.trim());
  return said?.content ?? '';
}

/** A renderer that throws must not end the user's turn. */
function safeEmitter(onEvent: ((event: AgentEvent) => void) | undefined): (event: AgentEvent) => void {
  return (event) => {
    try {
      onEvent?.(event);
    } catch {
      // Rendering is best effort; the turn's result is still returned to the caller.
    }
  };
}

/** The files of the user message: references to store, images to show (only fields that are set). */
function userMediaOf(opts: ConversationOptions): Pick<ChatMessage, 'attachments' | 'images'> {
  const media: Pick<ChatMessage, 'attachments' | 'images'> = {};
  if (opts.userAttachments?.length) media.attachments = opts.userAttachments;
  if (opts.userImages?.length) media.images = opts.userImages;
  return media;
}
