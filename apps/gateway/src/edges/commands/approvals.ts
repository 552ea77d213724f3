/**
 * `/approve [always]` and `/deny`: decide on a tool call that waits for approval (features/approvals). The buttons
 * under the question stand for the same commands with the request's id (`/approve <id> always`); typed without an
 * id they decide the chat's latest open question. Who may decide: the asker in a DM, an admin (HERALD_ADMIN_USERS)
 * elsewhere.
 */
import type { ApprovalChoice } from '../../features/approvals/desk.js';
import type { CommandDeps, CommandInput } from './context.js';

const ID = /^[\w-]{16}$/;
const DECIDED: Record<string, string> = {
  approved_once: '✅ Approved once',
  approved_session: '✅ Approved for the rest of this session',
  denied: '⛔ Denied',
  timed_out: '⌛ Timed out (denied)',
};

const NO_APPROVAL_WAITING = 'No tool is waiting for approval here.';
const NOT_YOUR_APPROVAL = '🙅 Only the person who asked (in a group: an admin) can decide on this.';

function parse(args: string, approving: boolean): { id?: string; choice: ApprovalChoice } | null {
  const words = args.split(/\s+/).filter(Boolean);
  const id = words[0] !== undefined && ID.test(words[0]) ? words.shift() : undefined;
  if (approving && words.length === 1 && words[0].toLowerCase() === 'always') return { id, choice: 'session' };
  if (words.length > 0) return null;
  return { id, choice: approving ? 'once' : 'deny' };
}

async function decide(deps: CommandDeps, { command, msg }: CommandInput, approving: boolean): Promise<string> {
  const parsed = parse(command.args, approving);
  if (parsed === null) return approving ? 'Usage: /approve, or /approve always (for the rest of this session).' : 'Usage: /deny';
  const res = await deps.approvals.decide({ ...parsed, conversationId: msg.conversationId, platform: msg.platform, userId: msg.userId });
  if (res.status === 'none') return NO_APPROVAL_WAITING;
  if (res.status === 'not_allowed') return NOT_YOUR_APPROVAL;
  const tool = res.request.tool;
  if (res.status === 'already') return `Already decided: ${DECIDED[res.decision] ?? res.decision} — ${tool}.`;
  return `${DECIDED[res.decision]}: ${tool}.`;
}

export const approveCommand = (deps: CommandDeps, input: CommandInput): Promise<string> => decide(deps, input, true);
export const denyCommand = (deps: CommandDeps, input: CommandInput): Promise<string> => decide(deps, input, false);
