/**
 * The internal message format (DESIGN.md): OpenAI-style, provider adapters convert at the edge.
 * Everything here is plain JSON so it survives SQLite and Redis round trips.
 */

export type Role = 'system' | 'user' | 'assistant' | 'tool';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  tool_name?: string;
  reasoning?: string;
  /**
   * Provider-opaque reasoning state the API needs back on later calls (the Responses API's encrypted reasoning
   * items). Never shown to users; replayed only to the same format and model.
   */
  reasoning_details?: ReasoningDetail[];
  finish_reason?: string;
}

export interface ReasoningDetail {
  /** Who can read it back, e.g. `openai-responses`. */
  format: string;
  /** The model that produced it: encrypted reasoning is only replayed to the model that wrote it. */
  model?: string;
  data: Record<string, unknown>;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/** Where a session came from (sessions.source). */
export type SessionSource = 'telegram' | 'discord' | 'slack' | 'cli' | 'api';
