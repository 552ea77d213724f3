/**
 * What the model calls an MCP tool: `<server>__<tool>`, within the 64 characters of letters, digits, `_` and `-`
 * both APIs allow. MCP tool names may hold other characters (`.`, `/`) and be longer; those are replaced and cut,
 * with a short hash so two long names that differ at the end stay apart. And which tools a server offers at all:
 * its `allow` list (when set) and `deny` list, exact names or `*` wildcards.
 */
import { createHash } from 'node:crypto';

const NAMESPACE_SEPARATOR = '__';
const MAX_TOOL_NAME = 64;

/** `files` + `read.file` → `files__read_file`; unique per server as long as the MCP names are. */
export function namespacedName(server: string, tool: string): string {
  const clean = tool.replace(/[^A-Za-z0-9_-]/g, '_');
  const full = `${server}${NAMESPACE_SEPARATOR}${clean}`;
  if (full.length <= MAX_TOOL_NAME && clean === tool) return full;
  // Changed or cut: a hash of the original keeps `a.b` and `a_b` (or two long names) apart.
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 6);
  const room = MAX_TOOL_NAME - server.length - NAMESPACE_SEPARATOR.length - hash.length - 1;
  return `${server}${NAMESPACE_SEPARATOR}${clean.slice(0, room)}_${hash}`;
}

function matcher(patterns: readonly string[]): (name: string) => boolean {
  const res = patterns.map(
    (p) =>
      new RegExp(
        `^${p
          .split('*')
          .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      ),
  );
  return (name) => res.some((re) => re.test(name));
}

/** Whether a server's tool is offered: on the allow list (when there is one) and not on the deny list. */
export function toolFilter(allow: readonly string[] | undefined, deny: readonly string[]): (tool: string) => boolean {
  const allowed = allow === undefined ? () => true : matcher(allow);
  const denied = matcher(deny);
  return (tool) => allowed(tool) && !denied(tool);
}
