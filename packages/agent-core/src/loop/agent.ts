/**
 * A conversation that remembers itself: `chat(text)` runs a turn on the agent's own history and appends what the
 * turn produced. For the CLI, scripts and tests; the gateway keeps history in SQLite and calls runConversation.
 */
import type { ChatMessage } from '../base/types.js';
import { FallbackState } from '../providers/fallback.js';
import { runConversation } from './run-conversation.js';
import type { ConversationOptions, ConversationResult } from './types.js';

export interface AgentOptions extends Omit<ConversationOptions, 'userMessage' | 'history' | 'signal'> {
  history?: ChatMessage[];
}

export interface ChatOptions {
  signal?: AbortSignal;
}

export class Agent {
  private messages: ChatMessage[];
  private readonly options: AgentOptions;
  /** Shared by every turn, so a rate-limited provider stays skipped until its cooldown ends. */
  readonly fallbackState: FallbackState;
  lastResult?: ConversationResult;

  constructor(options: AgentOptions) {
    this.options = options;
    this.messages = [...(options.history ?? [])];
    this.fallbackState = options.fallbackState ?? new FallbackState();
  }

  get history(): readonly ChatMessage[] {
    return this.messages;
  }

  /** Runs one turn and returns the reply text ('' when the turn was interrupted or failed; see lastResult). */
  async chat(text: string, chatOptions: ChatOptions = {}): Promise<string> {
    const result = await runConversation({
      ...this.options,
      fallbackState: this.fallbackState,
      userMessage: text,
      history: this.messages,
      signal: chatOptions.signal,
    });
    this.messages = result.compactedHistory ?? [...this.messages, ...result.newMessages];
    this.lastResult = result;
    return result.finalResponse;
  }

  reset(): void {
    this.messages = [];
    this.lastResult = undefined;
  }
}

export function createAgent(options: AgentOptions): Agent {
  return new Agent(options);
}
