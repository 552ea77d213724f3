/**
 * Where a person's decision lands: `/approve [always]` and `/deny` (typed, or a press of the question's buttons,
 * which the router handles as the same text). Checks that this person may decide, takes the decision if it is the
 * first, remembers "always for this session", and writes the audit record. The waiting worker (gate.ts) reads the
 * decision from Redis, so it does not matter which process took it, nor whether the worker that asked still lives.
 */
import type { Sql } from '@herald/agent-core';
import type { Redis } from 'ioredis';
import { ApprovalAudit, type ApprovalDecision } from './audit.js';
import { ApprovalRequests, type PendingApproval } from './requests.js';

export type ApprovalChoice = 'once' | 'session' | 'deny';

const DECISION_OF: Record<ApprovalChoice, ApprovalDecision> = { once: 'approved_once', session: 'approved_session', deny: 'denied' };

export type DecideResult =
  | { status: 'none' }
  | { status: 'not_allowed'; request: PendingApproval }
  | { status: 'already'; request: PendingApproval; decision: ApprovalDecision }
  | { status: 'decided'; request: PendingApproval; decision: ApprovalDecision };

export interface DecideInput {
  /** The request's id (a button carries it); absent: the chat's latest open request. */
  id?: string;
  conversationId: string;
  platform: string;
  userId: string;
  choice: ApprovalChoice;
}

export class ApprovalDesk {
  constructor(
    readonly requests: ApprovalRequests,
    readonly audit: ApprovalAudit,
    private readonly now: () => number = Date.now,
  ) {}

  async decide(input: DecideInput): Promise<DecideResult> {
    const id = input.id ?? (await this.requests.latestOpen(input.conversationId));
    const request = id ? await this.requests.get(id) : null;
    if (request === null) return { status: 'none' };
    if (request.platform !== input.platform || !request.approvers.includes(input.userId)) return { status: 'not_allowed', request };
    const decision = DECISION_OF[input.choice];
    const by = `${input.platform}:${input.userId}`;
    if (!(await this.requests.decide(request, { decision, by, at: this.now() }))) {
      const earlier = await this.requests.decision(request.requestId);
      return { status: 'already', request, decision: earlier?.decision ?? decision };
    }
    // Remembered before the worker reads the decision, so its next call of the tool is not asked about again.
    if (decision === 'approved_session') await this.requests.grant(request.sessionId, request.tool);
    await this.audit.record(request, decision, by);
    return { status: 'decided', request, decision };
  }
}

/** The desk on this gateway's Redis and session store. */
export function openApprovalDesk(redis: Redis, prefix: string, sql: Sql): ApprovalDesk {
  return new ApprovalDesk(new ApprovalRequests(redis, prefix), new ApprovalAudit(sql));
}
