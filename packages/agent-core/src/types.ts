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
  finish_reason?: string;
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
