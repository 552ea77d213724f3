/**
 * The audit of approval decisions, in the session store (table `tool_approvals`, core migration 48, SQLite and
 * PostgreSQL alike): one row per decision — who decided, which tool with which (masked) arguments, what, when, in
 * which session. Written where the decision is taken (the /approve and /deny commands on the ingress, a timeout or a
 * refusal on the worker); listed by the admin API and the console.
 */
import { randomUUID } from 'node:crypto';
import { type Sql, whereOf } from '@herald/agent-core';

export const DECISIONS = ['approved_once', 'approved_session', 'denied', 'timed_out', 'refused'] as const;
export type ApprovalDecision = (typeof DECISIONS)[number];

/** What the decision was about: the request as the worker put it to the chat. */
export interface ApprovalSubject {
  requestId: string;
  sessionId: string;
  sessionKey: string;
  platform: string;
  chatId: string;
  tool: string;
  /** Masked (mask.ts). */
  args: string;
  /** The platform user id of the person whose message led to the call. */
  askedBy: string;
  askedAt: number;
}

export interface ApprovalRecord extends ApprovalSubject {
  id: string;
  decision: ApprovalDecision;
  /** `platform:user id` of who pressed or typed; `timeout` or `policy` when nobody did. */
  decidedBy: string;
  decidedAt: number;
}

interface Row {
  id: string;
  request_id: string;
  session_id: string;
  session_key: string;
  platform: string;
  chat_id: string;
  tool: string;
  args: string;
  asked_by: string;
  decision: ApprovalDecision;
  decided_by: string;
  asked_at: number | string;
  decided_at: number | string;
}

export interface AuditFilter {
  sessionId?: string;
  tool?: string;
  decision?: ApprovalDecision;
  /** Newest first; at most this many (default 100). */
  limit?: number;
  /** Only decisions before this time (ms), for paging. */
  before?: number;
}

export class ApprovalAudit {
  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  async record(subject: ApprovalSubject, decision: ApprovalDecision, decidedBy: string): Promise<ApprovalRecord> {
    const rec: ApprovalRecord = { ...subject, id: randomUUID(), decision, decidedBy, decidedAt: this.now() };
    await this.sql.run(
      `INSERT INTO tool_approvals (id, request_id, session_id, session_key, platform, chat_id, tool, args, asked_by, decision, decided_by, asked_at, decided_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        rec.id,
        rec.requestId,
        rec.sessionId,
        rec.sessionKey,
        rec.platform,
        rec.chatId,
        rec.tool,
        rec.args,
        rec.askedBy,
        rec.decision,
        rec.decidedBy,
        rec.askedAt,
        rec.decidedAt,
      ],
    );
    return rec;
  }

  async list(filter: AuditFilter = {}): Promise<ApprovalRecord[]> {
    const { where, params } = whereOf([
      ['session_id = ?', filter.sessionId],
      ['tool = ?', filter.tool],
      ['decision = ?', filter.decision],
      ['decided_at < ?', filter.before],
    ]);
    const rows = await this.sql.all<Row>(`SELECT * FROM tool_approvals ${where} ORDER BY decided_at DESC, id LIMIT ?`, [...params, filter.limit ?? 100]);
    return rows.map(fromRow);
  }
}

function fromRow(r: Row): ApprovalRecord {
  return {
    id: r.id,
    requestId: r.request_id,
    sessionId: r.session_id,
    sessionKey: r.session_key,
    platform: r.platform,
    chatId: r.chat_id,
    tool: r.tool,
    args: r.args,
    askedBy: r.asked_by,
    decision: r.decision,
    decidedBy: r.decided_by,
    askedAt: Number(r.asked_at),
    decidedAt: Number(r.decided_at),
  };
}
