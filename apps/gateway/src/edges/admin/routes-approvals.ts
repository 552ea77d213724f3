/**
 * The audit of approval decisions in the admin API (features/approvals/audit.ts): who decided on which tool call,
 * with which masked arguments, what and when, newest first.
 */
import type { FastifyInstance } from 'fastify';
import { DECISIONS, type ApprovalAudit, type ApprovalDecision, type ApprovalRecord } from '../../features/approvals/audit.js';

const iso = (ms: number): string => new Date(ms).toISOString();

const recordSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    request_id: { type: 'string' },
    session_id: { type: 'string' },
    session_key: { type: 'string' },
    platform: { type: 'string' },
    chat_id: { type: 'string' },
    tool: { type: 'string' },
    args: { type: 'string', description: 'The arguments as JSON, secrets masked, cut to 600 characters' },
    asked_by: { type: 'string', description: 'Platform user id of the person whose message led to the call' },
    decision: { type: 'string', enum: [...DECISIONS] },
    decided_by: { type: 'string', description: 'platform:user id of who decided; "timeout" or "policy" when nobody did' },
    asked_at: { type: 'string', format: 'date-time' },
    decided_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** One decision as the API shows it. */
function approvalJson(r: ApprovalRecord): Record<string, string> {
  return {
    id: r.id,
    request_id: r.requestId,
    session_id: r.sessionId,
    session_key: r.sessionKey,
    platform: r.platform,
    chat_id: r.chatId,
    tool: r.tool,
    args: r.args,
    asked_by: r.askedBy,
    decision: r.decision,
    decided_by: r.decidedBy,
    asked_at: iso(r.askedAt),
    decided_at: iso(r.decidedAt),
  };
}

interface ListQuery {
  session_id?: string;
  tool?: string;
  decision?: ApprovalDecision;
  limit?: number;
  before?: string;
}

export function approvalRoutes(app: FastifyInstance, audit: ApprovalAudit): void {
  app.get<{ Querystring: ListQuery }>(
    '/admin/approvals',
    {
      schema: {
        summary: 'Decisions on tool calls that needed approval, newest first',
        tags: ['approvals'],
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            session_id: { type: 'string', maxLength: 200 },
            tool: { type: 'string', maxLength: 200 },
            decision: { type: 'string', enum: [...DECISIONS] },
            limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
            before: { type: 'string', format: 'date-time', description: 'Only decisions before this time (the last one of a page)' },
          },
        },
        response: { 200: { type: 'object', properties: { approvals: { type: 'array', items: recordSchema } } } },
      },
    },
    async (req) => {
      const q = req.query;
      const records = await audit.list({
        sessionId: q.session_id,
        tool: q.tool,
        decision: q.decision,
        limit: q.limit,
        before: q.before === undefined ? undefined : Date.parse(q.before),
      });
      return { approvals: records.map(approvalJson) };
    },
  );
}
