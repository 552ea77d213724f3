/**
 * The worker's side of approvals: the tool hooks a turn runs its tool calls through (agent-core loop/tool-hooks.ts).
 *
 * - `approval` (before): a call the profile's policy names (policy.ts) waits for a decision. It opens a request in
 *   Redis (requests.ts) — or finds the one a killed worker opened for the same call — puts the question in the chat
 *   once, with buttons, and waits for the decision key: a press or `/approve` / `/deny` (desk.ts, on any ingress),
 *   "always" granted earlier in the session, or the deadline, which denies. Where nobody can be asked (the
 *   OpenAI-compatible API, a scheduled run) the call is refused with a tool result that says why.
 * - `audit` (after): one log line per tool call that ran or was refused, with masked arguments.
 *
 * The hooks are built once (`hooks`); the turn a call belongs to comes with the call, in the tool context
 * (APPROVAL_TURN_CONTEXT, put there by turn/tools.ts; a subagent inherits its parent's).
 */
import { abortableSleep, type BeforeVerdict, type ToolCallInfo, type ToolHook } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';
import type { ApprovalDecision } from './audit.js';
import type { ApprovalDesk } from './desk.js';
import { approvalReason, type ApprovalPolicy, type ApprovalReason } from './policy.js';
import { approvalRequestId, type DecisionNote, type PendingApproval } from './requests.js';

/** How often a waiting call looks for the decision (one GET). */
const DECISION_POLL_MS = 250;

interface Choice {
  label: string;
  text: string;
}

/** The tool-context key a turn puts its ApprovalTurn under. */
export const APPROVAL_TURN_CONTEXT = 'approvalTurn';

/** One turn, as the approval hook needs it. */
export interface ApprovalTurn {
  sessionId: string;
  sessionKey: string;
  platform: string;
  conversationId: string;
  chatId: string;
  chatType: string;
  /** Whose message the turn answers. */
  userId: string;
  policy: ApprovalPolicy;
  /** Why nobody can be asked in this turn, or null: 'api', 'scheduled'. */
  cannotAsk: 'api' | 'scheduled' | null;
  /** Puts the question in the chat with its buttons (only `pressers` count); returns the offer id to withdraw. */
  ask(text: string, choices: Choice[], pressers: string[]): Promise<string | null>;
  withdraw(offerId: string): Promise<void>;
  /** Activity for the worker's watchdog while the call waits. */
  touch(): void;
}

export interface ApprovalGateOptions {
  desk: ApprovalDesk;
  timeoutMs: number;
  /** HERALD_ADMIN_USERS: `platform:user id`; they decide in groups. */
  admins: readonly string[];
  mask: (args: Record<string, unknown>) => string;
  log: Logger;
  pollMs?: number;
  now?: () => number;
}

const REASON_TEXT: Record<ApprovalReason, string> = {
  listed: 'this agent is set to ask before it',
  destructive: 'its server marks it as destructive',
  code: 'it runs code',
};

export class ApprovalGate {
  private readonly now: () => number;

  constructor(private readonly opts: ApprovalGateOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** The hooks of every turn, in order: approval first, so the audit line says whether the call ran. */
  readonly hooks: ToolHook[] = [
    { name: 'approval', before: (call) => this.before(turnOf(call), call) },
    {
      name: 'audit',
      after: async (call, outcome) => {
        const { sessionKey } = turnOf(call);
        this.opts.log.info(
          { sessionKey, tool: call.name, args: this.opts.mask(call.args), ran: outcome.ran, ok: outcome.ok, durationMs: outcome.durationMs },
          'tool call',
        );
      },
    },
  ];

  private async before(turn: ApprovalTurn, call: ToolCallInfo): Promise<BeforeVerdict> {
    const reason = approvalReason(turn.policy, call.tool);
    if (reason === null) return { action: 'allow' };
    const { desk } = this.opts;
    if (await desk.requests.granted(turn.sessionId, call.name)) return { action: 'allow' };
    const request = this.requestFor(turn, call);
    if (turn.cannotAsk !== null) {
      await desk.audit.record(request, 'refused', 'policy');
      const why = turn.cannotAsk === 'api' ? 'requests over the API cannot ask for it' : 'a scheduled task has nobody to ask';
      return { action: 'deny', result: `Error: ${call.name} needs a person's approval (${REASON_TEXT[reason]}), and ${why}; it was not run.` };
    }
    let { request: open } = await desk.requests.open(request);
    if (open.deadline <= this.now() && (await desk.requests.decision(open.requestId)) === null) {
      // The same question from a turn that was stopped, never answered: ask afresh.
      await desk.requests.close(open);
      ({ request: open } = await desk.requests.open(request));
    }
    const offerId = open.sent ? open.sent.offerId : await this.askUnlessDecided(turn, open, reason);
    try {
      const note = await this.waitForDecision(turn, open, call.signal);
      return verdictFor(call.name, note, this.opts.timeoutMs);
    } finally {
      // Aborted (the turn was stopped, or the worker is shutting down): the request stays for a re-run to find.
      if (!call.signal.aborted) {
        await desk.requests.close(open);
        if (offerId) await turn.withdraw(offerId).catch(() => undefined);
      }
    }
  }

  private requestFor(turn: ApprovalTurn, call: ToolCallInfo): PendingApproval {
    const askedAt = this.now();
    const approvers = turn.chatType === 'dm' ? [turn.userId] : adminsOn(this.opts.admins, turn.platform);
    return {
      requestId: approvalRequestId(turn.sessionId, call.name, call.args),
      sessionId: turn.sessionId,
      sessionKey: turn.sessionKey,
      platform: turn.platform,
      chatId: turn.chatId,
      conversationId: turn.conversationId,
      tool: call.name,
      args: this.opts.mask(call.args),
      askedBy: turn.userId,
      askedAt,
      approvers,
      deadline: askedAt + this.opts.timeoutMs,
    };
  }

  /**
   * Asks in the chat, unless someone has decided already: a worker killed after the question went out but before
   * its mark (`markSent`) leaves a request that looks unasked, and a decision proves the question reached the chat.
   */
  private async askUnlessDecided(turn: ApprovalTurn, request: PendingApproval, reason: ApprovalReason): Promise<string | null> {
    if ((await this.opts.desk.requests.decision(request.requestId)) !== null) return null;
    return this.ask(turn, request, reason);
  }

  private async ask(turn: ApprovalTurn, request: PendingApproval, reason: ApprovalReason): Promise<string | null> {
    const seconds = Math.round(this.opts.timeoutMs / 1000);
    const who =
      turn.chatType === 'dm'
        ? ''
        : request.approvers.length > 0
          ? '\nOnly an admin can decide here.'
          : '\nNo admin is configured to decide here (HERALD_ADMIN_USERS).';
    const text = [
      `🔐 Approval needed: the agent wants to run ${request.tool} (${REASON_TEXT[reason]}) with`,
      request.args,
      `Approve it? Without an answer within ${seconds} s it is denied. You can also type /approve, /approve always or /deny.${who}`,
    ].join('\n');
    const id = request.requestId;
    const choices = [
      { label: '✅ Approve once', text: `/approve ${id}` },
      { label: '♾️ Always in this chat session', text: `/approve ${id} always` },
      { label: '⛔ Deny', text: `/deny ${id}` },
    ];
    const offerId = await turn.ask(text, choices, request.approvers);
    await this.opts.desk.requests.markSent(request, offerId);
    return offerId;
  }

  /** The decision: a person's, or the deadline's (taken here, unless someone decided at the same moment). */
  private async waitForDecision(turn: ApprovalTurn, request: PendingApproval, signal: AbortSignal): Promise<DecisionNote> {
    const { desk } = this.opts;
    for (;;) {
      const note = await desk.requests.decision(request.requestId);
      if (note !== null) return note;
      if (this.now() >= request.deadline) {
        const timedOut: DecisionNote = { decision: 'timed_out', by: 'timeout', at: this.now() };
        if (await desk.requests.decide(request, timedOut)) {
          await desk.audit.record(request, 'timed_out', 'timeout');
          return timedOut;
        }
        continue;
      }
      turn.touch();
      await abortableSleep(Math.min(this.opts.pollMs ?? DECISION_POLL_MS, Math.max(1, request.deadline - this.now())), signal);
    }
  }
}

/** The call's turn (the tool context's APPROVAL_TURN_CONTEXT): a call outside a turn is a programming error. */
function turnOf(call: ToolCallInfo): ApprovalTurn {
  const turn = call.context[APPROVAL_TURN_CONTEXT] as ApprovalTurn | undefined;
  if (!turn) throw new Error(`tool call ${call.name} reached the approval hooks without its turn`);
  return turn;
}

function adminsOn(admins: readonly string[], platform: string): string[] {
  return admins.filter((a) => a.startsWith(`${platform}:`)).map((a) => a.slice(platform.length + 1));
}

const APPROVED: ReadonlySet<ApprovalDecision> = new Set(['approved_once', 'approved_session']);

function verdictFor(tool: string, note: DecisionNote, timeoutMs: number): BeforeVerdict {
  if (APPROVED.has(note.decision)) return { action: 'allow' };
  if (note.decision === 'timed_out') {
    return { action: 'deny', result: `Not run: nobody approved ${tool} within ${Math.round(timeoutMs / 1000)} s, so it was denied.` };
  }
  return { action: 'deny', result: `Not run: the user denied ${tool}. Do not try it again unless they ask for it.` };
}
