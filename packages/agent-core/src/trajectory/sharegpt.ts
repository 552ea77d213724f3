/**
 * Sessions as ShareGPT-style trajectories, the training format Hermes exports: `conversations` of
 * `{from, value}` turns — `system`, `human`, `gpt` (reasoning in `<think>…</think>`, then the text, then one
 * `<tool_call>{"name","arguments"}</tool_call>` block per call) and `tool` (each result in a
 * `<tool_response>{"tool_call_id","name","content"}</tool_response>` block, consecutive results in one turn).
 */
import type { ChatMessage } from '../base/types.js';

export interface ShareGptTurn {
  from: 'system' | 'human' | 'gpt' | 'tool';
  value: string;
}

export interface ShareGptRecord {
  id: string;
  conversations: ShareGptTurn[];
  /** When the session started (ISO 8601). */
  timestamp: string;
  model: string | null;
  source: string;
  /** The conversation ended on a final answer (the last message is the model's reply with finish reason stop). */
  completed: boolean;
}

export interface TrajectorySession {
  id: string;
  systemPrompt: string | null;
  startedAt: number;
  model: string | null;
  source: string;
}

export function toShareGpt(session: TrajectorySession, messages: readonly ChatMessage[]): ShareGptRecord {
  const conversations: ShareGptTurn[] = [];
  if (session.systemPrompt) conversations.push({ from: 'system', value: session.systemPrompt });
  const names = new Map<string, string>();
  for (const m of messages) {
    switch (m.role) {
      case 'system':
        conversations.push({ from: 'system', value: m.content ?? '' });
        break;
      case 'user':
        conversations.push({ from: 'human', value: m.content ?? '' });
        break;
      case 'assistant':
        for (const tc of m.tool_calls ?? []) names.set(tc.id, tc.function.name);
        conversations.push({ from: 'gpt', value: gptValue(m) });
        break;
      case 'tool': {
        const block = toolResponse(m, names.get(m.tool_call_id ?? '') ?? m.tool_name ?? '');
        const last = conversations.at(-1);
        if (last?.from === 'tool') last.value += `\n${block}`;
        else conversations.push({ from: 'tool', value: block });
        break;
      }
    }
  }
  return {
    id: session.id,
    conversations,
    timestamp: new Date(session.startedAt).toISOString(),
    model: session.model,
    source: session.source,
    completed: isCompleted(messages),
  };
}

export function isCompleted(messages: readonly ChatMessage[]): boolean {
  const last = messages.at(-1);
  return last?.role === 'assistant' && !last.tool_calls?.length && (last.finish_reason ?? 'stop') === 'stop';
}

/** Every gpt turn carries a think block, empty when the model gave no reasoning, so all turns share one shape. */
function gptValue(m: ChatMessage): string {
  const parts = [`<think>\n${m.reasoning ? `${m.reasoning}\n` : ''}</think>`];
  if (m.content) parts.push(m.content);
  for (const tc of m.tool_calls ?? []) {
    parts.push(`<tool_call>\n${JSON.stringify({ name: tc.function.name, arguments: parseJson(tc.function.arguments) })}\n</tool_call>`);
  }
  return parts.join('\n');
}

function toolResponse(m: ChatMessage, name: string): string {
  const body = { tool_call_id: m.tool_call_id ?? '', name, content: parseJson(m.content ?? '') };
  return `<tool_response>\n${JSON.stringify(body)}\n</tool_response>`;
}

/** Arguments and results that are JSON go in as JSON; anything else as the string it is. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
