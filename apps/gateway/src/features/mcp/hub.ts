/**
 * The MCP servers of one worker process. Every process that runs turns holds its own connections (and starts its
 * own stdio servers); ingress-only processes hold none. Tools are discovered when the worker starts and whenever a
 * server says its list changed; each turn takes the current list of the servers its agent profile may use.
 */
import type { Tool } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';
import { serversForProfile, type McpServerConfig } from '../../support/config/mcp.js';
import { McpConnection, type BackoffOptions, type McpServerStatus } from './connection.js';
import type { McpResultLimits } from './result.js';

export interface McpHubOptions {
  log: Logger;
  /** The media limits (HERALD_MEDIA_MAX_*): what a result's images and embedded text are held to. */
  limits: McpResultLimits;
  backoff?: BackoffOptions;
  keepaliveMs?: number;
}

export class McpHub {
  private readonly connections: McpConnection[];

  constructor(servers: readonly McpServerConfig[], opts: McpHubOptions) {
    const log = opts.log;
    for (const s of servers.filter((c) => !c.enabled)) log.info({ mcpServer: s.name }, `mcp server ${s.name} disabled in the config`);
    this.connections = servers
      .filter((s) => s.enabled)
      .map((config) => new McpConnection(config, { log, limits: opts.limits, backoff: opts.backoff, keepaliveMs: opts.keepaliveMs }));
  }

  /** Connects every server at once; resolves when each first attempt has succeeded or failed (failures retry). */
  async start(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.start()));
  }

  /** The tools of the servers `profile` may use, as they are now. A server that is down keeps its last list. */
  toolsFor(profile: string): Tool[] {
    const allowed = new Set(
      serversForProfile(
        this.connections.map((c) => c.config),
        profile,
      ).map((s) => s.name),
    );
    return this.connections
      .filter((c) => allowed.has(c.config.name))
      .flatMap((c) =>
        c.tools().map(
          (info): Tool => ({
            name: info.name,
            description: info.description,
            parameters: info.parameters,
            readOnly: info.readOnly,
            ...(info.destructive && { destructive: true }),
            execute: (args, ctx) => c.call(info.remoteName, args, ctx.signal),
          }),
        ),
      );
  }

  status(): McpServerStatus[] {
    return this.connections.map((c) => c.status());
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.close()));
  }
}
