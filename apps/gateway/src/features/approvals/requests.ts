/**
 * Approval requests in Redis, so a pause outlives the worker that asked: a worker killed while it waits leaves the
 * request (and any decision taken meanwhile) for the worker that runs the turn again.
 *
 * A request's id is derived from what is asked — the session, the tool and its arguments — so the re-run, whose
 * model asks for the same call again, finds the same request instead of asking twice. The decision is a key of its
 * own, written with SET NX: the first decision (a press, `/approve`, the timeout) is the only one.
 *
 *   <prefix>:approval:req:<id>         the request (JSON), until its deadline plus a grace period
 *   <prefix>:approval:dec:<id>         the decision (JSON), SET NX
 *   <prefix>:approval:open:<conv id>   the chat's latest open request: what a bare `/approve` means
 *   <prefix>:approval:grant:<session>  tools approved "always" for the session (a set)
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ApprovalDecision, ApprovalSubject } from './audit.js';

/** Keys outlive the deadline this long, so a late look (the re-run of a killed worker) still finds them. */
const GRACE_MS = 10 * 60_000;
/** "Always for this session" lasts as long as a session plausibly does. */
const GRANT_TTL_MS = 30 * 24 * 60 * 60_000;

export interface PendingApproval extends ApprovalSubject {
  /** Where the question was asked (the chat's encoded conversation id). */
  conversationId: string;
  /** Platform user ids whose decision counts: the asker in a DM, the configured admins elsewhere. */
  approvers: string[];
  /** When the timeout denies (ms). */
  deadline: number;
  /** Set once the question is in the chat: the buttons' offer id (null: text only). */
  sent?: { offerId: string | null };
}

export interface DecisionNote {
  decision: ApprovalDecision;
  /** `platform:user id`, or `timeout`. */
  by: string;
  at: number;
}

export function approvalRequestId(sessionId: string, tool: string, args: Record<string, unknown>): string {
  return createHash('sha256')
    .update(`${sessionId}\u0000${tool}\u0000${JSON.stringify(args)}`)
    .digest('base64url')
    .slice(0, 16);
}

export class ApprovalRequests {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Opens the request, or returns the one already open under its id (asked before a crash). */
  async open(req: PendingApproval): Promise<{ request: PendingApproval; created: boolean }> {
    const ttl = this.ttl(req.deadline);
    const created = (await this.redis.set(this.key('req', req.requestId), JSON.stringify(req), 'PX', ttl, 'NX')) === 'OK';
    const request = created ? req : ((await this.get(req.requestId)) ?? req);
    await this.redis.set(this.key('open', request.conversationId), request.requestId, 'PX', this.ttl(request.deadline));
    return { request, created };
  }

  async get(id: string): Promise<PendingApproval | null> {
    const raw = await this.redis.get(this.key('req', id));
    return raw === null ? null : (JSON.parse(raw) as PendingApproval);
  }

  /** Records that the question reached the chat (a re-run does not send it again). */
  async markSent(req: PendingApproval, offerId: string | null): Promise<void> {
    await this.redis.set(this.key('req', req.requestId), JSON.stringify({ ...req, sent: { offerId } }), 'PX', this.ttl(req.deadline), 'XX');
  }

  /** True when this is the request's first decision (and so the one that counts). */
  async decide(req: PendingApproval, note: DecisionNote): Promise<boolean> {
    return (await this.redis.set(this.key('dec', req.requestId), JSON.stringify(note), 'PX', this.ttl(req.deadline), 'NX')) === 'OK';
  }

  async decision(id: string): Promise<DecisionNote | null> {
    const raw = await this.redis.get(this.key('dec', id));
    return raw === null ? null : (JSON.parse(raw) as DecisionNote);
  }

  /** The chat's latest request still open, if any. */
  async latestOpen(conversationId: string): Promise<string | null> {
    return this.redis.get(this.key('open', conversationId));
  }

  /** The decision was acted on: the same call later is a new question. */
  async close(req: PendingApproval): Promise<void> {
    const openKey = this.key('open', req.conversationId);
    if ((await this.redis.get(openKey)) === req.requestId) await this.redis.del(openKey);
    await this.redis.del(this.key('req', req.requestId), this.key('dec', req.requestId));
  }

  async grant(sessionId: string, tool: string): Promise<void> {
    const key = this.key('grant', sessionId);
    await this.redis.multi().sadd(key, tool).pexpire(key, GRANT_TTL_MS).exec();
  }

  async granted(sessionId: string, tool: string): Promise<boolean> {
    return (await this.redis.sismember(this.key('grant', sessionId), tool)) === 1;
  }

  private ttl(deadline: number): number {
    return Math.max(1, deadline - this.now()) + GRACE_MS;
  }

  private key(kind: 'req' | 'dec' | 'open' | 'grant', id: string): string {
    return `${this.prefix}:approval:${kind}:${id}`;
  }
}
