/**
 * An in-process Provider that answers from a script, for unit tests of the loop. It implements our own Provider
 * contract (no SDK involved); end-to-end tests use the real providers against the HTTP stand-ins instead.
 */
import { emptyUsage, type ChatMessage, type Usage } from '../base/types.js';
import {
  ProviderError,
  type CompletionRequest,
  type CompletionResult,
  type FinishReason,
  type Provider,
  type ProviderName,
  type ToolSchema,
} from '../providers/types.js';

export interface ScriptStep {
  text?: string;
  reasoning?: string;
  toolCalls?: { id?: string; name: string; arguments: string }[];
  finish?: FinishReason;
  usage?: Partial<Usage>;
  error?: ProviderError;
  /** Stream the text, then wait until the request is aborted (an answer that never finishes). */
  hang?: boolean;
  /** Stream the text, then fail with this error (a connection that drops mid-answer). */
  dropAfterText?: ProviderError;
}

export interface RecordedCall {
  messages: ChatMessage[];
  tools: ToolSchema[];
  toolChoice?: 'auto' | 'none';
  systemPrompt: string;
  maxTokens?: number;
}

export class ScriptedProvider implements Provider {
  readonly apiMode = 'chat_completions' as const;
  readonly calls: RecordedCall[] = [];
  private readonly steps: ScriptStep[] = [];
  private fallbackStep?: (call: RecordedCall) => ScriptStep;

  constructor(
    readonly model: string = 'scripted-model',
    readonly name: ProviderName = 'openai',
  ) {}

  script(...steps: ScriptStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  /** Answers calls once the script has run out. */
  otherwise(fn: (call: RecordedCall) => ScriptStep): this {
    this.fallbackStep = fn;
    return this;
  }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const call: RecordedCall = {
      messages: structuredClone(req.messages),
      tools: structuredClone(req.tools),
      toolChoice: req.toolChoice,
      systemPrompt: req.systemPrompt,
      ...(req.maxTokens === undefined ? {} : { maxTokens: req.maxTokens }),
    };
    this.calls.push(call);
    const step = this.steps.shift() ?? this.fallbackStep?.(call);
    if (!step) throw new Error(`ScriptedProvider ${this.model}: script exhausted at call ${this.calls.length}`);
    if (req.signal.aborted) throw new ProviderError('aborted', 'aborted');
    if (step.error) throw step.error;
    if (step.reasoning) req.onReasoningDelta?.(step.reasoning);
    if (step.text) req.onTextDelta?.(step.text);
    if (step.hang) await untilAborted(req.signal);
    if (step.dropAfterText) throw step.dropAfterText;

    const message: ChatMessage = { role: 'assistant', content: step.text ?? null };
    if (step.reasoning) message.reasoning = step.reasoning;
    const toolCalls = step.toolCalls ?? [];
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((c, i) => ({
        id: c.id ?? `call_${this.calls.length}_${i}`,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    const finishReason = step.finish ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    message.finish_reason = finishReason;
    return { message, finishReason, usage: { ...emptyUsage(), ...step.usage }, model: this.model };
  }
}

function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(new ProviderError('aborted', 'aborted'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}
