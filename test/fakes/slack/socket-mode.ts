/**
 * Socket Mode, Slack side: `apps.connections.open` hands out one-time `ws://…/link/?ticket=…` URLs; a connection
 * gets `hello`, then `events_api` envelopes that must be acked (`{envelope_id, payload}`). An `events_api` envelope not
 * acked in time is redelivered with `retry_attempt`/`retry_reason`, also on the next connection after a drop; a slash
 * command or a button press is not (as on Slack).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';

const LINK_PATH = '/link/';

export interface Envelope {
  envelope_id: string;
  /** `events_api` for Events API payloads, `slash_commands` for a slash command's form fields, `interactive` for button presses. */
  type: 'events_api' | 'slash_commands' | 'interactive';
  payload: Record<string, unknown>;
  accepts_response_payload: boolean;
  retry_attempt: number;
  retry_reason: string;
}

export interface AckRecord {
  envelopeId: string;
  payload: unknown;
  at: number;
}

interface Pending {
  envelope: Envelope;
  timer: NodeJS.Timeout | undefined;
}

export interface SocketModeOptions {
  appId: string;
  /** How long Slack waits for an ack before redelivering (real Slack: a few seconds). */
  ackTimeoutMs: number;
  /** Redeliveries of one envelope before Slack gives up on it. */
  maxRetries: number;
}

export class SocketModeServer {
  readonly acks: AckRecord[] = [];
  /** Every envelope written to a socket, redeliveries included. */
  readonly delivered: Envelope[] = [];
  /** Connections that completed the handshake, ever. */
  totalConnections = 0;

  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly tickets = new Set<string>();
  private readonly sockets = new Set<WebSocket>();
  private readonly pending = new Map<string, Pending>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly opts: SocketModeOptions) {}

  /** The URL `apps.connections.open` returns. */
  issueUrl(origin: string): string {
    const ticket = randomUUID();
    this.tickets.add(ticket);
    return `${origin.replace(/^http/, 'ws')}${LINK_PATH}?ticket=${ticket}&app_id=${this.opts.appId}`;
  }

  /** Handles the HTTP upgrade itself: a `ws` server with a fixed `path` would never match `/link/?ticket=…`. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const ticket = url.searchParams.get('ticket');
    if (url.pathname !== LINK_PATH || ticket === null || !this.tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
  }

  get openConnections(): number {
    return [...this.sockets].filter((s) => s.readyState === WebSocket.OPEN).length;
  }

  /** Wraps an `event_callback` body (or a slash command) in an envelope and delivers it (now, or on the next connection). */
  send(payload: Record<string, unknown>, retry?: { attempt: number; reason: string }, type: Envelope['type'] = 'events_api'): Envelope {
    const envelope: Envelope = {
      envelope_id: randomUUID(),
      type,
      payload,
      accepts_response_payload: type === 'slash_commands',
      retry_attempt: retry?.attempt ?? 0,
      retry_reason: retry?.reason ?? '',
    };
    this.pending.set(envelope.envelope_id, { envelope, timer: undefined });
    this.deliver(envelope.envelope_id);
    return envelope;
  }

  /** Asks clients to reconnect, as Slack does before recycling a host. */
  disconnect(reason: 'refresh_requested' | 'link_disabled' | 'warning' = 'refresh_requested'): void {
    for (const ws of this.sockets) ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'applink-fake-1' } }));
  }

  /** Cuts every connection without a close frame. */
  drop(): void {
    for (const ws of this.sockets) ws.terminate();
  }

  isAcked(envelopeId: string): boolean {
    return this.acks.some((a) => a.envelopeId === envelopeId);
  }

  /** Resolves once `predicate` holds, re-checked whenever something happens on a socket. */
  waitFor(predicate: () => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        cleanup();
        resolve();
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`Slack fake: timed out waiting for ${what}`));
      }, timeoutMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
    });
  }

  close(): void {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
    this.wss.close();
  }

  private onConnection(ws: WebSocket): void {
    this.sockets.add(ws);
    this.totalConnections += 1;
    ws.on('message', (data) => this.onMessage(data.toString()));
    ws.on('close', () => {
      this.sockets.delete(ws);
      this.notify();
    });
    ws.on('error', () => ws.terminate());
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.sockets.size,
        debug_info: { host: 'applink-fake-1', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: this.opts.appId },
      }),
    );
    // Whatever was not acked on the previous connection goes out again on this one.
    for (const [id, p] of this.pending) {
      if (p.timer === undefined) this.deliver(id);
    }
    this.notify();
  }

  private onMessage(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof msg !== 'object' || msg === null) return;
    const envelopeId = (msg as { envelope_id?: unknown }).envelope_id;
    if (typeof envelopeId !== 'string') return;
    const p = this.pending.get(envelopeId);
    if (p !== undefined) {
      clearTimeout(p.timer);
      this.pending.delete(envelopeId);
    }
    this.acks.push({ envelopeId, payload: (msg as { payload?: unknown }).payload, at: Date.now() });
    this.notify();
  }

  private deliver(envelopeId: string): void {
    const p = this.pending.get(envelopeId);
    if (p === undefined) return;
    clearTimeout(p.timer);
    p.timer = undefined;
    // Slack delivers each envelope to one of the app's connections; the newest is as good as any.
    const target = [...this.sockets].reverse().find((s) => s.readyState === WebSocket.OPEN);
    if (target === undefined) return; // sent when a client connects
    target.send(JSON.stringify(p.envelope));
    this.delivered.push(structuredClone(p.envelope));
    p.timer = setTimeout(() => {
      p.timer = undefined;
      // Slack redelivers only Events API envelopes; a slash command or a button press not acked is an error the user sees.
      if (p.envelope.type !== 'events_api' || p.envelope.retry_attempt >= this.opts.maxRetries) {
        this.pending.delete(envelopeId);
        return;
      }
      p.envelope = { ...p.envelope, retry_attempt: p.envelope.retry_attempt + 1, retry_reason: 'timeout' };
      this.deliver(envelopeId);
    }, this.opts.ackTimeoutMs);
    this.notify();
  }

  private notify(): void {
    for (const check of [...this.waiters]) check();
  }
}
