/**
 * The store's public row types (camelCase) and their mapping from the snake_case SQLite rows.
 */
import type { AttachmentRef, ChatMessage, ReasoningDetail, Role, SessionSource, ToolCall } from '../base/types.js';

export interface Session {
  id: string;
  /** The session key this session was created for (it may since have moved on to a newer session). */
  key: string;
  source: SessionSource;
  userId: string | null;
  chatId: string | null;
  model: string | null;
  systemPrompt: string | null;
  /** The session this one continues (compression lineage). */
  parentSessionId: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
  toolCallCount: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  estimatedCostUsd: number;
  title: string | null;
  lastPromptTokens: number | null;
  /** The agent profile the session belongs to; null for the default profile. */
  profile: string | null;
  /** When the session was last written to (messages or usage), ms; its start when nothing was. */
  lastActive: number;
  /** Input + output + cache read + cache write tokens. */
  totalTokens: number;
  /** What the providers reported the session's calls cost (OpenRouter's usage.cost); null when none did. */
  actualCostUsd: number | null;
}

export interface StoredMessage {
  id: number;
  sessionId: string;
  role: Role;
  content: string | null;
  toolCalls: ToolCall[] | null;
  toolCallId: string | null;
  toolName: string | null;
  finishReason: string | null;
  reasoning: string | null;
  /** Files the user sent with this message (references only). */
  attachments: AttachmentRef[] | null;
  /** Provider-opaque reasoning state (ChatMessage.reasoning_details). */
  reasoningDetails: ReasoningDetail[] | null;
  platformMessageId: string | null;
  turnId: string | null;
  /** Position within the turn (null for messages written without a turn id). */
  seq: number | null;
  createdAt: number;
}

export const TURN_STATUSES = ['running', 'replied', 'delivered', 'interrupted', 'failed'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

export interface Turn {
  id: string;
  sessionId: string;
  status: TurnStatus;
  reply: string | null;
  /** Platform ids of the messages that carried the reply (recorded chunk by chunk as they go out). */
  deliveredIds: string[];
  error: string | null;
  /** Fencing token of the worker that owns the turn now; writes with an older token are refused. */
  fence: number | null;
  /** Times a worker claimed the turn to send its reply: more than one means an earlier send may have happened. */
  sendAttempts: number;
  /** The platform message a streamed reply is written into, once created. */
  streamMessageId: string | null;
  /** How many files the reply carries (turn-files.ts); 0 spares delivery the look-up. */
  fileCount: number;
  createdAt: number;
  updatedAt: number;
}

export interface SessionRow {
  id: string;
  key: string;
  source: SessionSource;
  user_id: string | null;
  chat_id: string | null;
  model: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number;
  tool_call_count: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  estimated_cost_usd: number;
  title: string | null;
  last_prompt_tokens: number | null;
  /** Absent on rows read before migration 25 ran (never, after start-up). */
  profile?: string | null;
  /** Migration 52; absent only on rows read before it ran. */
  last_active?: number | string | null;
  total_tokens?: number | string;
  actual_cost_usd?: number | null;
}

export interface MessageRow {
  id: number;
  session_id: string;
  role: Role;
  content: string | null;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  finish_reason: string | null;
  reasoning: string | null;
  attachments: string | null;
  reasoning_details: string | null;
  platform_message_id: string | null;
  turn_id: string | null;
  seq: number | null;
  created_at: number;
}

export interface TurnRow {
  id: string;
  session_id: string;
  status: TurnStatus;
  reply: string | null;
  delivered_ids: string;
  error: string | null;
  fence: number | null;
  send_attempts: number;
  stream_message_id: string | null;
  file_count: number;
  created_at: number;
  updated_at: number;
}

export function toSession(r: SessionRow): Session {
  return {
    id: r.id,
    key: r.key,
    source: r.source,
    userId: r.user_id,
    chatId: r.chat_id,
    model: r.model,
    systemPrompt: r.system_prompt,
    parentSessionId: r.parent_session_id,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    endReason: r.end_reason,
    messageCount: r.message_count,
    toolCallCount: r.tool_call_count,
    inputTokens: r.input_tokens,
    outputTokens: r.output_tokens,
    cacheReadTokens: r.cache_read_tokens,
    cacheWriteTokens: r.cache_write_tokens,
    estimatedCostUsd: r.estimated_cost_usd,
    title: r.title,
    lastPromptTokens: r.last_prompt_tokens,
    profile: r.profile ?? null,
    lastActive: r.last_active === null || r.last_active === undefined ? r.started_at : Number(r.last_active),
    totalTokens: Number(r.total_tokens ?? r.input_tokens + r.output_tokens + r.cache_read_tokens + r.cache_write_tokens),
    actualCostUsd: r.actual_cost_usd === null || r.actual_cost_usd === undefined ? null : Number(r.actual_cost_usd),
  };
}

/** A JSON list column (tool calls, file references, reasoning details): parsed, or null when the row has none. */
function jsonList<T>(text: string | null | undefined): T[] | null {
  return text ? (JSON.parse(text) as T[]) : null;
}

export function toStoredMessage(r: MessageRow): StoredMessage {
  return {
    id: r.id,
    sessionId: r.session_id,
    role: r.role,
    content: r.content,
    toolCalls: jsonList<ToolCall>(r.tool_calls),
    toolCallId: r.tool_call_id,
    toolName: r.tool_name,
    finishReason: r.finish_reason,
    reasoning: r.reasoning,
    attachments: jsonList<AttachmentRef>(r.attachments),
    reasoningDetails: jsonList<ReasoningDetail>(r.reasoning_details),
    platformMessageId: r.platform_message_id,
    turnId: r.turn_id,
    seq: r.seq,
    createdAt: r.created_at,
  };
}

/**
 * The columns a message in a provider's request needs. A history read selects only these: every column of every
 * row becomes a JavaScript value (the session id, turn id and timestamps of a 14-message history cost more to build
 * than SQLite takes to find the rows), and the rows go straight to chat messages.
 */
export const CHAT_COLUMNS = 'role, content, tool_calls, tool_call_id, tool_name, finish_reason, reasoning, attachments, reasoning_details';

export type ChatRow = Pick<
  MessageRow,
  'role' | 'content' | 'tool_calls' | 'tool_call_id' | 'tool_name' | 'finish_reason' | 'reasoning' | 'attachments' | 'reasoning_details'
>;

/** A stored row in the internal message format, with absent optional fields left out (not set to undefined or null). */
export function toChatMessage(r: ChatRow): ChatMessage {
  const msg: ChatMessage = { role: r.role, content: r.content };
  const calls = jsonList<ToolCall>(r.tool_calls);
  if (calls && calls.length > 0) msg.tool_calls = calls;
  if (r.tool_call_id !== null) msg.tool_call_id = r.tool_call_id;
  if (r.tool_name !== null) msg.tool_name = r.tool_name;
  if (r.reasoning !== null) msg.reasoning = r.reasoning;
  const details = jsonList<ReasoningDetail>(r.reasoning_details);
  if (details && details.length > 0) msg.reasoning_details = details;
  if (r.finish_reason !== null) msg.finish_reason = r.finish_reason;
  const attachments = jsonList<AttachmentRef>(r.attachments);
  if (attachments && attachments.length > 0) msg.attachments = attachments;
  return msg;
}

export function toTurn(r: TurnRow): Turn {
  return {
    id: r.id,
    sessionId: r.session_id,
    status: r.status,
    reply: r.reply,
    deliveredIds: JSON.parse(r.delivered_ids) as string[],
    error: r.error,
    fence: r.fence,
    sendAttempts: r.send_attempts,
    streamMessageId: r.stream_message_id,
    fileCount: Number(r.file_count ?? 0),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
