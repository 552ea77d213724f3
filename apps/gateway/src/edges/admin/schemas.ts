/**
 * JSON shapes of the admin API (snake_case, as the SQLite columns are named) and the mapping from store rows.
 * The schemas validate requests and serialise responses, and feed the OpenAPI document.
 */
import type { SearchHit, Session, StoredMessage } from '@herald/agent-core';
import { cachePercent } from '../../features/llm/cache-health.js';
import { DEFAULT_PROFILE } from '../../support/config/profile-names.js';

export const SOURCES = ['telegram', 'discord', 'slack', 'whatsapp', 'matrix', 'cli', 'api'] as const;

const nullableString = { type: ['string', 'null'] } as const;
const nullableNumber = { type: ['number', 'null'] } as const;
/** Times are ISO 8601 strings: readable in curl, parseable everywhere. */
const time = { type: 'string', format: 'date-time' } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

export const sessionSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    key: { type: 'string' },
    source: { type: 'string', enum: [...SOURCES] },
    user_id: nullableString,
    chat_id: nullableString,
    model: nullableString,
    title: nullableString,
    parent_session_id: nullableString,
    started_at: time,
    ended_at: nullableTime,
    end_reason: nullableString,
    message_count: { type: 'integer' },
    tool_call_count: { type: 'integer' },
    input_tokens: { type: 'integer' },
    output_tokens: { type: 'integer' },
    cache_read_tokens: { type: 'integer' },
    cache_write_tokens: { type: 'integer' },
    estimated_cost_usd: { type: 'number' },
    total_tokens: { type: 'integer', description: 'Input + output + cache read + cache write tokens' },
    actual_cost_usd: { ...nullableNumber, description: 'What the providers reported the calls cost (OpenRouter); null when none did' },
    last_active: { ...time, description: 'When the session was last written to (messages or usage)' },
    cache_hit_percent: { ...nullableNumber, description: 'Share of prompt tokens read from the provider cache (null: no prompt yet)' },
    last_prompt_tokens: nullableNumber,
    profile: { type: 'string', description: 'The agent profile the session belongs to' },
  },
} as const;

export const messageSchema = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    role: { type: 'string' },
    content: nullableString,
    tool_calls: { type: ['array', 'null'], items: { type: 'object', additionalProperties: true } },
    tool_call_id: nullableString,
    tool_name: nullableString,
    finish_reason: nullableString,
    reasoning: nullableString,
    platform_message_id: nullableString,
    created_at: time,
  },
} as const;

export const searchHitSchema = {
  type: 'object',
  properties: {
    session_id: { type: 'string' },
    source: { type: 'string' },
    title: nullableString,
    message_id: { type: 'integer' },
    role: { type: 'string' },
    snippet: { type: 'string', description: 'The matching passage; hits are wrapped in >>> and <<<' },
    created_at: time,
  },
} as const;

export const errorSchema = {
  type: 'object',
  properties: { error: { type: 'string' }, message: { type: 'string' } },
} as const;

const iso = (ms: number): string => new Date(ms).toISOString();

export function sessionJson(s: Session): Record<string, unknown> {
  return {
    id: s.id,
    key: s.key,
    source: s.source,
    user_id: s.userId,
    chat_id: s.chatId,
    model: s.model,
    title: s.title,
    parent_session_id: s.parentSessionId,
    started_at: iso(s.startedAt),
    ended_at: s.endedAt === null ? null : iso(s.endedAt),
    end_reason: s.endReason,
    message_count: s.messageCount,
    tool_call_count: s.toolCallCount,
    input_tokens: s.inputTokens,
    output_tokens: s.outputTokens,
    cache_read_tokens: s.cacheReadTokens,
    cache_write_tokens: s.cacheWriteTokens,
    estimated_cost_usd: s.estimatedCostUsd,
    total_tokens: s.totalTokens,
    actual_cost_usd: s.actualCostUsd,
    last_active: iso(s.lastActive),
    cache_hit_percent: cachePercent(s.inputTokens, s.cacheReadTokens, s.cacheWriteTokens),
    last_prompt_tokens: s.lastPromptTokens,
    profile: s.profile ?? DEFAULT_PROFILE,
  };
}

export function messageJson(m: StoredMessage): Record<string, unknown> {
  return {
    id: m.id,
    role: m.role,
    content: m.content,
    tool_calls: m.toolCalls,
    tool_call_id: m.toolCallId,
    tool_name: m.toolName,
    finish_reason: m.finishReason,
    reasoning: m.reasoning,
    platform_message_id: m.platformMessageId,
    created_at: iso(m.createdAt),
  };
}

export function searchHitJson(h: SearchHit): Record<string, unknown> {
  return {
    session_id: h.sessionId,
    source: h.source,
    title: h.title,
    message_id: h.messageId,
    role: h.role,
    snippet: h.snippet,
    created_at: iso(h.createdAt),
  };
}
