/**
 * The `mcp_servers` setting (HERALD_MCP_SERVERS): MCP tool servers by name, each either a command Herald starts
 * and talks to over stdio, or a Streamable HTTP endpoint:
 *
 *   mcp_servers:
 *     files:  { command: npx, args: [-y, "@modelcontextprotocol/server-filesystem", /srv/docs], deny: [write_file] }
 *     search: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${SEARCH_TOKEN}" }, timeout_ms: 20000 }
 *
 * In the environment the same mapping is JSON. `${NAME}` in `env`, `headers`, `args` and `url` is replaced by
 * that environment variable when the config loads, so secrets need not live in the file.
 */
import { z } from 'zod';
import { DEFAULT_PROFILE, PROFILE_NAME, PROFILE_NAME_RULE } from './profile-names.js';

const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/**
 * A server name becomes the prefix of its tools (`name__tool`), so it may not contain `__` or end in `_`, and is
 * short enough to leave room for the tool's own name within the 64 characters both APIs allow.
 */
const SERVER_NAME = /^(?!.*__)[A-Za-z0-9](?:[A-Za-z0-9_-]{0,22}[A-Za-z0-9-])?$/;

const text = z.string().trim().min(1, 'must not be empty');
const stringMap = z.record(z.string().regex(/^[^\s:]+$/, 'names may not contain spaces or ":"'), z.string());
const httpUrl = z
  .string()
  .trim()
  .refine((v) => /^https?:\/\/\S+$/i.test(v), 'must be an http:// or https:// URL');

const serverSchema = z
  .strictObject({
    command: text.optional(),
    args: z.array(z.string()).default([]),
    env: stringMap.default({}),
    cwd: text.optional(),
    url: httpUrl.optional(),
    headers: stringMap.default({}),
    allow: z.array(text).optional(),
    deny: z.array(text).default([]),
    timeout_ms: z
      .number()
      .int('must be a whole number')
      .min(100, 'must be at least 100')
      .max(3_600_000, 'must be at most 3600000')
      .default(DEFAULT_MCP_TIMEOUT_MS),
    profiles: z.array(z.string().regex(PROFILE_NAME, PROFILE_NAME_RULE)).min(1, 'name at least one profile').default([DEFAULT_PROFILE]),
    enabled: z.boolean().default(true),
  })
  .superRefine((s, ctx) => {
    const issue = (path: string, message: string): void => void ctx.addIssue({ code: 'custom', path: [path], message });
    if (s.command === undefined && s.url === undefined) issue('command', 'set command (a stdio server) or url (a Streamable HTTP server)');
    if (s.command !== undefined && s.url !== undefined) issue('url', 'set either command or url, not both');
    if (s.url !== undefined && (s.args.length > 0 || Object.keys(s.env).length > 0 || s.cwd !== undefined)) {
      issue('url', 'args, env and cwd belong to a command (stdio) server');
    }
    if (s.command !== undefined && Object.keys(s.headers).length > 0) issue('headers', 'headers belong to a url (HTTP) server');
    // Whether each profile exists is checked with the profiles themselves (profiles/check.ts).
  });

export type McpServerConfig = z.output<typeof serverSchema> & { name: string };

const serversSchema = z
  .record(z.string(), serverSchema)
  .superRefine((servers, ctx) => {
    for (const name of Object.keys(servers)) {
      if (!SERVER_NAME.test(name))
        ctx.addIssue({ code: 'custom', path: [name], message: 'a server name is letters, digits, - and single _, at most 24 characters' });
    }
  })
  .transform((servers) => Object.entries(servers).map(([name, s]) => ({ ...s, name })));

/** The environment gives JSON text, herald.yaml a mapping; both end as a list of servers. */
export const mcpServersSchema = z.preprocess((raw, ctx) => {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object of servers by name, e.g. {"files":{"command":"mcp-files"}}' });
    return z.NEVER;
  }
}, serversSchema);

const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${NAME}` in the values that may carry secrets. Returns the servers, or the first problem as
 * `<server>.<field>: …` for the caller's ConfigError.
 */
export function interpolateServers(servers: readonly McpServerConfig[], env: NodeJS.ProcessEnv): McpServerConfig[] | string {
  let problem: string | null = null;
  const fill = (value: string, where: string): string =>
    value.replace(PLACEHOLDER, (_match, name: string) => {
      const found = env[name];
      if (found === undefined || found === '') problem ??= `${where}: \${${name}} is not set in the environment`;
      return found ?? '';
    });
  const fillMap = (map: Record<string, string>, where: string): Record<string, string> =>
    Object.fromEntries(Object.entries(map).map(([k, v]) => [k, fill(v, `${where}.${k}`)]));
  const out = servers.map((s) => ({
    ...s,
    args: s.args.map((a, i) => fill(a, `${s.name}.args[${i}]`)),
    env: fillMap(s.env, `${s.name}.env`),
    headers: fillMap(s.headers, `${s.name}.headers`),
    url: s.url === undefined ? undefined : fill(s.url, `${s.name}.url`),
  }));
  return problem ?? out;
}

/** Values of a server config that are secrets (header values, environment values), for the log scrubber. */
export function serverSecrets(servers: readonly McpServerConfig[] | undefined): string[] {
  const out: string[] = [];
  for (const s of servers ?? []) {
    for (const value of [...Object.values(s.headers), ...Object.values(s.env)]) {
      out.push(value);
      // `Bearer <token>`: the token alone may be quoted elsewhere.
      const token = /^\S+\s+(\S{6,})$/.exec(value)?.[1];
      if (token) out.push(token);
    }
  }
  return out;
}

/** The servers one agent profile may use. */
export function serversForProfile(servers: readonly McpServerConfig[], profile: string): McpServerConfig[] {
  return servers.filter((s) => s.enabled && s.profiles.includes(profile));
}
