/**
 * Which tool calls need a person's approval (per agent profile): the tools the profile names, by exact name or a
 * glob (`github__create_*`, `*__delete_*`); by default every MCP tool that declares `destructiveHint: true` and the
 * code-execution tool. A name or glob in the profile's exemptions wins over all of these (a trusted server's tool).
 */
import type { Tool } from '@herald/agent-core';

/** The code-execution tool (features/sandbox): it runs what the model wrote, so it asks by default. */
const CODE_TOOL = 'execute_code';

export interface ApprovalPolicy {
  /** Names or globs of tools that always need approval. */
  tools: readonly string[];
  /** Names or globs of tools that never need it (over the defaults and `tools`). */
  exempt: readonly string[];
}

export type ApprovalReason = 'listed' | 'destructive' | 'code';

/** `*` any run of characters, `?` one character; everything else literal. Tool names are `[A-Za-z0-9_-]`. */
function globRegex(glob: string): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

function matchesAny(name: string, globs: readonly string[]): boolean {
  return globs.some((g) => globRegex(g).test(name));
}

/** Why this tool needs approval under the policy, or null when it may run unasked. */
export function approvalReason(policy: ApprovalPolicy, tool: Pick<Tool, 'name' | 'destructive'>): ApprovalReason | null {
  if (matchesAny(tool.name, policy.exempt)) return null;
  if (matchesAny(tool.name, policy.tools)) return 'listed';
  if (tool.destructive === true) return 'destructive';
  if (tool.name === CODE_TOOL) return 'code';
  return null;
}
