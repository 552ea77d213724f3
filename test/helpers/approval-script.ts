/**
 * For the approval tests: an OpenAI stand-in script where "delete <n>" calls the test MCP server's destructive tool
 * (`local__delete_ticket`, with a secret among its arguments) and then reports the tool's result; anything else is
 * echoed. What the agent got back shows whether the tool ran ("local deleted ticket <n>") or was refused.
 */
import type { RecordedRequest, Step } from '../fakes/llm/index.js';

export const DESTRUCTIVE_TOOL = 'local__delete_ticket';
/** Passed as an argument: must never be shown in the chat, the logs or the audit. */
export const ARG_SECRET = 'tok-live-93f0c2a1b7';

interface WireMessage {
  role: string;
  content: string | null | Array<{ type: string; text?: string }>;
}

const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];

function turnStart(req: RecordedRequest): number {
  return messagesOf(req).findLastIndex((m) => m.role === 'user' && typeof m.content === 'string');
}

/** This turn's tool results (after the user's message). */
function toolResultsOf(req: RecordedRequest): string[] {
  return messagesOf(req)
    .slice(turnStart(req) + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content ?? ''));
}

export function approvalScript(req: RecordedRequest): Step {
  const text = String(messagesOf(req)[turnStart(req)]?.content ?? '');
  const m = /delete (\d+)/.exec(text);
  if (!m) return { text: `ok: ${text}` };
  const results = toolResultsOf(req);
  if (results.length === 0) return { toolCalls: [{ name: DESTRUCTIVE_TOOL, arguments: JSON.stringify({ id: Number(m[1]), api_token: ARG_SECRET }) }] };
  return { text: `results: ${results.join(' | ')}` };
}

/** The decisions as GET /admin/approvals lists them. */
export interface ApprovalJson {
  request_id: string;
  session_key: string;
  platform: string;
  tool: string;
  args: string;
  asked_by: string;
  decision: string;
  decided_by: string;
  decided_at: string;
}

export async function auditedDecisions(url: string, adminToken: string): Promise<ApprovalJson[]> {
  const res = await fetch(`${url}/admin/approvals`, { headers: { authorization: `Bearer ${adminToken}` } });
  if (res.status !== 200) throw new Error(`GET /admin/approvals: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { approvals: ApprovalJson[] }).approvals;
}
