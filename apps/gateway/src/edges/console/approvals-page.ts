/**
 * Approvals: the audit of decisions on tool calls that needed a person's yes (features/approvals), newest first —
 * who decided, which tool with which masked arguments, what, when, in which session.
 */
import type { ApprovalDecision, ApprovalRecord } from '../../features/approvals/audit.js';
import { CONSOLE_PATH } from './auth.js';
import { html, type Html } from './html.js';
import { tableWrap, when } from './layout.js';

export const APPROVALS_PAGE = 100;

const DECISION_TEXT: Record<ApprovalDecision, string> = {
  approved_once: 'Approved once',
  approved_session: 'Approved for the session',
  denied: 'Denied',
  timed_out: 'Timed out (denied)',
  refused: 'Refused (nobody to ask)',
};

export function approvalsBody(records: ApprovalRecord[]): Html {
  const rows = records.map(
    (r) => html`<tr>
<td>${when(r.decidedAt)}</td><th scope="row">${r.tool}</th><td><code>${r.args}</code></td><td>${DECISION_TEXT[r.decision] ?? r.decision}</td>
<td>${r.decidedBy}</td><td>${r.platform}:${r.askedBy}</td><td><a href="${CONSOLE_PATH}/sessions/${encodeURIComponent(r.sessionId)}">${r.sessionKey}</a></td></tr>`,
  );
  return html`
<p>Tool calls that waited for a person's approval (MCP tools marked destructive, code execution, the tools a profile names), and what was decided. Arguments are shown with secrets masked.</p>
${tableWrap(`The last ${APPROVALS_PAGE} decisions, newest first`, ['When', 'Tool', 'Arguments', 'Decision', 'Decided by', 'Asked by', 'Session'], rows, 'No tool call has needed approval yet.')}`;
}
