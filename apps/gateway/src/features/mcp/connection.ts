/**
 * One MCP server, kept connected: connect (initialize, then list the tools, page by page), refresh the tools when
 * the server sends `notifications/tools/list_changed`, call tools with the server's timeout, and, when the server
 * fails to start, exits, stops answering (a call times out and a ping does too) or drops the connection, restart
 * it with exponential backoff. A call while the server is down fails at once with the reason, so the agent gets a
 * tool error and the turn goes on; nothing here ever throws past a tool call.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { toToolParameters, type JsonSchema, type ToolOutput } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';
import { VERSION } from '../../support/version.js';
import type { McpServerConfig } from '../../support/config/mcp.js';
import { namespacedName, toolFilter } from './names.js';
import { McpToolError, toolOutputOf, type McpResultLimits } from './result.js';
import { openTransport, type OpenedTransport } from './transport.js';

export type McpServerState = 'connecting' | 'ready' | 'backoff' | 'stopped';

export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  /** Tools offered (after allow / deny). */
  tools: number;
  /** Why the server is not ready (or the last failure), null when all is well. */
  error: string | null;
  /** When the state last changed (ms). */
  since: number;
  /** Failed attempts since it was last ready; restarts after a crash count too. */
  failures: number;
  /** Times the server went down after it had been ready (exited, closed the connection, stopped answering). */
  crashes: number;
  /** Times Herald started it again after it went down or failed to start. */
  restarts: number;
  /** The latest failure, kept once the server is back (unlike `error`), and when it happened (ms); null if none. */
  lastError: string | null;
  lastErrorAt: number | null;
  /** When the next connection attempt is due (backoff), else null. */
  nextAttemptAt: number | null;
}

/** A tool of this server as the agent sees it. */
export interface McpToolInfo {
  /** `server__tool`, what the model calls. */
  name: string;
  /** The server's own name for it. */
  remoteName: string;
  description: string;
  parameters: JsonSchema;
  readOnly: boolean;
  /** The server declares `destructiveHint: true` (an explicit claim only): approvals ask first by default. */
  destructive: boolean;
}

export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 1_000, maxMs: 60_000 };
/** A ready server is pinged this often, so health shows a dead HTTP server (or a hung one) before a call finds it. */
const KEEPALIVE_MS = 30_000;
const MAX_PING_MS = 5_000;
/**
 * Starting a server (spawning it, `npx` fetching it, the handshake and the first tool list) may take longer than
 * a call is allowed: a slow start is not a dead server.
 */
const MIN_START_MS = 30_000;
const MAX_TOOLS_PER_SERVER = 500;
const MAX_DESCRIPTION_CHARS = 2_000;

export interface McpConnectionOptions {
  log: Logger;
  /** What a result's images and embedded text are held to. */
  limits: McpResultLimits;
  backoff?: BackoffOptions;
  keepaliveMs?: number;
  /** Told whenever the server's tools (as offered) change. */
  onToolsChanged?: (tools: readonly McpToolInfo[]) => void;
  now?: () => number;
}

export class McpConnection {
  private state: McpServerState = 'connecting';
  private since: number;
  private error: string | null = null;
  private failures = 0;
  private crashes = 0;
  private restarts = 0;
  private lastError: string | null = null;
  private lastErrorAt: number | null = null;
  private nextAttemptAt: number | null = null;
  private client: Client | null = null;
  private opened: OpenedTransport | null = null;
  private toolList: McpToolInfo[] = [];
  private retryTimer: NodeJS.Timeout | null = null;
  private keepalive: NodeJS.Timeout | null = null;
  private readonly offered: (tool: string) => boolean;
  private readonly backoff: BackoffOptions;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(
    readonly config: McpServerConfig,
    private readonly opts: McpConnectionOptions,
  ) {
    this.offered = toolFilter(config.allow, config.deny);
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.now = opts.now ?? Date.now;
    this.since = this.now();
    this.log = opts.log.child({ mcpServer: config.name });
  }

  /** The first connection attempt; resolves when it succeeded or failed (a failure schedules the next). */
  start(): Promise<void> {
    return this.connect();
  }

  tools(): readonly McpToolInfo[] {
    return this.toolList;
  }

  status(): McpServerStatus {
    return {
      name: this.config.name,
      transport: this.config.url === undefined ? 'stdio' : 'http',
      state: this.state,
      tools: this.toolList.length,
      error: this.error,
      since: this.since,
      failures: this.failures,
      crashes: this.crashes,
      restarts: this.restarts,
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      nextAttemptAt: this.nextAttemptAt,
    };
  }

  /** Calls a tool by the server's name for it; the text (and images) for the agent, or an Error that says what went wrong. */
  async call(remoteName: string, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutput> {
    const client = this.client;
    if (this.state !== 'ready' || client === null) throw new Error(this.unavailable());
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name: remoteName, arguments: args }, undefined, { signal, timeout: this.config.timeout_ms })) as CallToolResult;
    } catch (err) {
      if (signal.aborted) throw err;
      throw this.callFailure(client, err);
    }
    return toolOutputOf(result, this.opts.limits);
  }

  async close(): Promise<void> {
    this.setState('stopped', null);
    this.clearTimers();
    await this.dropClient();
  }

  private unavailable(): string {
    const { name } = this.config;
    if (this.state === 'stopped') return `MCP server "${name}" is stopped.`;
    const why = this.error ? `: ${this.error}` : '';
    const next = this.nextAttemptAt === null ? '' : ` Herald restarts it in ${Math.max(0, Math.ceil((this.nextAttemptAt - this.now()) / 1000))} s.`;
    return `MCP server "${name}" is not available (${this.state === 'backoff' ? 'down' : 'starting'}${why}).${next}`;
  }

  private callFailure(client: Client, err: unknown): Error {
    if (err instanceof McpToolError) return err;
    const { name, timeout_ms } = this.config;
    if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
      // A slow tool is not yet a dead server: a ping tells them apart.
      this.checkAlive(client, `a call took longer than ${timeout_ms} ms`);
      return new Error(`MCP server "${name}" did not answer within ${timeout_ms} ms.`);
    }
    if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
      return new Error(`MCP server "${name}" closed the connection during the call${this.stderrNote()}; Herald restarts it.`);
    }
    // The server answered with an error of its own (unknown tool, invalid arguments): the connection is fine.
    if (err instanceof McpError) return new Error(err.message);
    this.checkAlive(client, errorText(err));
    return new Error(`MCP server "${name}" could not be reached: ${errorText(err)}`);
  }

  private async connect(): Promise<void> {
    if (this.state === 'stopped') return;
    this.setState('connecting', this.error);
    this.nextAttemptAt = null;
    const opened = openTransport(this.config, (line) => this.log.debug({ stderr: line }, 'mcp server stderr'));
    const client = new Client({ name: 'herald', version: VERSION }, { capabilities: {} });
    this.opened = opened;
    this.client = client;
    // Closed by the server (a stdio server exiting, an HTTP session ending) or by us: only the current, ready one
    // counts (while connecting, the failed request says more, and the catch below reports it).
    client.onclose = () => {
      if (this.client === client && this.state === 'ready') this.fail(`the connection closed${this.stderrNote()}`);
    };
    client.onerror = (err) => this.log.debug({ err: errorText(err) }, 'mcp transport error');
    try {
      const startMs = Math.max(this.config.timeout_ms, MIN_START_MS);
      await client.connect(opened.transport, { timeout: startMs });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        if (this.client === client)
          void this.refresh(client).catch((err: unknown) => this.log.warn({ err: errorText(err) }, 'mcp tool list refresh failed; keeping the old list'));
      });
      await this.refresh(client, startMs);
    } catch (err) {
      if (this.client === client) this.fail(`could not start: ${errorText(err)}${this.stderrNote()}`);
      return;
    }
    if (this.client !== client) return;
    this.failures = 0;
    this.setState('ready', null);
    this.startKeepalive(client);
    this.log.info({ tools: this.toolList.map((t) => t.name), transport: opened.kind }, `mcp server ${this.config.name} ready (${this.toolList.length} tools)`);
  }

  /** Lists every page of tools and keeps those offered. */
  private async refresh(client: Client, timeoutMs = this.config.timeout_ms): Promise<void> {
    const listed: McpTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
      listed.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined && listed.length < MAX_TOOLS_PER_SERVER);
    if (this.client !== client) return;
    const before = JSON.stringify(this.toolList);
    this.toolList = listed
      .filter((t) => this.offered(t.name))
      .slice(0, MAX_TOOLS_PER_SERVER)
      .map((t) => this.toolInfo(t));
    if (JSON.stringify(this.toolList) !== before) {
      this.log.info({ tools: this.toolList.map((t) => t.name) }, `mcp server ${this.config.name} tools: ${this.toolList.length}`);
      this.opts.onToolsChanged?.(this.toolList);
    }
  }

  private toolInfo(t: McpTool): McpToolInfo {
    const text = t.description ?? t.title ?? t.annotations?.title ?? `Tool ${t.name} of the ${this.config.name} server.`;
    return {
      name: namespacedName(this.config.name, t.name),
      remoteName: t.name,
      description: text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text,
      parameters: toToolParameters(t.inputSchema),
      readOnly: t.annotations?.readOnlyHint === true,
      destructive: t.annotations?.readOnlyHint !== true && t.annotations?.destructiveHint === true,
    };
  }

  /** The server stopped working: close what is left and try again after the backoff. */
  private fail(reason: string): void {
    if (this.state === 'stopped') return;
    if (this.state === 'ready') this.crashes++;
    this.failures++;
    this.lastError = reason;
    this.lastErrorAt = this.now();
    const delay = Math.min(this.backoff.initialMs * 2 ** (this.failures - 1), this.backoff.maxMs);
    this.clearTimers();
    this.nextAttemptAt = this.now() + delay;
    this.setState('backoff', reason);
    this.log.warn(
      { reason, failures: this.failures, crashes: this.crashes, retryInMs: delay },
      `mcp server ${this.config.name} down: ${reason}; restarting in ${delay} ms`,
    );
    void this.dropClient();
    this.retryTimer = setTimeout(() => {
      this.restarts++;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  private checkAlive(client: Client, why: string): void {
    const timeout = Math.min(MAX_PING_MS, this.config.timeout_ms);
    client.ping({ timeout }).catch(() => {
      if (this.client === client) this.fail(`${why}, and a ping got no answer within ${timeout} ms`);
    });
  }

  private startKeepalive(client: Client): void {
    this.keepalive = setInterval(() => this.checkAlive(client, 'keep-alive'), this.opts.keepaliveMs ?? KEEPALIVE_MS);
    this.keepalive.unref();
  }

  private stderrNote(): string {
    const tail = this.opened?.stderrTail() ?? [];
    return tail.length > 0 ? ` (stderr: ${tail.at(-1)})` : '';
  }

  private setState(state: McpServerState, error: string | null): void {
    if (this.state !== state) this.since = this.now();
    this.state = state;
    this.error = error;
  }

  private clearTimers(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.keepalive) clearInterval(this.keepalive);
    this.retryTimer = null;
    this.keepalive = null;
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await client.close().catch(() => undefined);
  }
}

function errorText(err: unknown): string {
  // The HTTP transport's errors keep the status apart from a message that may be a bare body.
  if (err instanceof StreamableHTTPError && err.code !== undefined && !err.message.includes(String(err.code))) return `HTTP ${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
