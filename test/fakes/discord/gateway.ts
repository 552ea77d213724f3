/**
 * The stand-in's gateway WebSocket (JSON encoding, `?v=10&encoding=json`): HELLO, heartbeats, IDENTIFY → READY
 * and a GUILD_CREATE per guild, dispatches with increasing `s`, RESUME → missed events then RESUMED, and
 * Discord's close codes (https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { userJson, type JsonObject } from './model.js';
import { Intents, type Audience } from './rules.js';
import type { World } from './world.js';

const Op = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  PresenceUpdate: 3,
  VoiceStateUpdate: 4,
  Resume: 6,
  Reconnect: 7,
  RequestGuildMembers: 8,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
} as const;

export const CloseCode = {
  UnknownError: 4000,
  UnknownOpcode: 4001,
  DecodeError: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidApiVersion: 4012,
  InvalidIntents: 4013,
  DisallowedIntents: 4014,
} as const;

const CLOSE_REASONS: Record<number, string> = {
  4000: 'Unknown error.',
  4001: 'Unknown opcode.',
  4002: 'Decode error.',
  4003: 'Not authenticated.',
  4004: 'Authentication failed.',
  4005: 'Already authenticated.',
  4012: 'Invalid API version.',
  4013: 'Invalid intent(s).',
  4014: 'Disallowed intent(s).',
};

const ALL_INTENTS = (1 << 26) - 1;
/** Events a session keeps for RESUME. */
const SESSION_BUFFER = 1000;

interface DispatchFrame {
  op: 0;
  s: number;
  t: string;
  /** A JSON object for every event Discord documents; anything at all from dispatchRaw. */
  d: unknown;
}

interface Session {
  id: string;
  intents: number;
  seq: number;
  events: DispatchFrame[];
  ws: WebSocket | null;
  /** Already-delivered events to send again on the next RESUME (Discord's at-least-once replay). */
  replayOnResume: number;
}

export interface GatewayOptions {
  world: World;
  token: string;
  heartbeatIntervalMs: number;
  /** Whether the application has the Message Content privileged intent enabled in the Developer Portal. */
  messageContentAllowed(): boolean;
  url(): string;
}

export interface DropOptions {
  /** Close code sent to the client (default 4000, which clients resume after). Ignored when `abrupt`. */
  code?: number;
  /** Kill the TCP connection without a close frame (the client sees 1006). */
  abrupt?: boolean;
  /** On the next RESUME, send this many already-delivered events again before the missed ones. */
  replay?: number;
}

export class FakeGateway {
  private readonly wss = new WebSocketServer({ noServer: true });
  private readonly sessions = new Map<string, Session>();
  private readonly identifyRejections: number[] = [];
  /** Per connection, who waits for its next heartbeat (requestHeartbeat). */
  private readonly heartbeatWaiters = new Map<WebSocket, Array<() => void>>();
  available = true;
  identifyCount = 0;
  resumeCount = 0;

  constructor(private readonly opts: GatewayOptions) {}

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.available) {
      socket.end('HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, req));
  }

  /** Makes the next IDENTIFY fail with a close code (4014 disallowed intents, 4004 bad token, ...). */
  rejectNextIdentify(code: number): void {
    this.identifyRejections.push(code);
  }

  /** Sends an event to every session whose intents cover it; sessions without a live socket keep it for RESUME. */
  dispatch(t: string, d: JsonObject, audience: Audience): void {
    for (const session of this.sessions.values()) {
      if ((session.intents & audience.intent) === 0) continue;
      const hidden = audience.contentVisibleWithoutIntent === false && (session.intents & Intents.MessageContent) === 0;
      this.push(session, t, hidden ? { ...d, content: '', embeds: [], attachments: [], components: [] } : d);
    }
  }

  /**
   * Sends an event of any name with any payload to every session, in sequence and kept for RESUME like every
   * dispatch: the shapes Discord documents are not checked, so a test can send the ones it does not.
   */
  dispatchRaw(t: string, d: unknown): void {
    for (const session of this.sessions.values()) this.push(session, t, d);
  }

  /** Sends one text frame as given on every live connection, outside the sequence and not kept for RESUME. */
  sendRaw(frame: string): void {
    for (const ws of this.liveSockets()) ws.send(frame);
  }

  /**
   * Asks every live connection for a heartbeat now (opcode 1 from the gateway, as Discord does) and resolves once
   * each has sent one. Frames are read in order, so by then each client has read everything sent before.
   */
  requestHeartbeat(): Promise<void> {
    const sockets = this.liveSockets();
    if (sockets.length === 0) return Promise.reject(new Error('no live gateway connection to ask for a heartbeat'));
    return Promise.all(
      sockets.map(
        (ws) =>
          new Promise<void>((resolve) => {
            this.heartbeatWaiters.set(ws, [...(this.heartbeatWaiters.get(ws) ?? []), resolve]);
            ws.send(JSON.stringify({ op: Op.Heartbeat, d: null, s: null, t: null }));
          }),
      ),
    ).then(() => undefined);
  }

  /** Closes every live connection; sessions survive so clients can RESUME. */
  drop(opts: DropOptions = {}): number {
    let dropped = 0;
    for (const session of this.sessions.values()) {
      const ws = session.ws;
      if (!ws) continue;
      session.ws = null;
      session.replayOnResume = opts.replay ?? 0;
      if (opts.abrupt) ws.terminate();
      else {
        const code = opts.code ?? CloseCode.UnknownError;
        ws.close(code, CLOSE_REASONS[code] ?? 'Dropped by the stand-in');
      }
      dropped += 1;
    }
    return dropped;
  }

  /** Sends the last `count` events named `t` again on live connections, with their original sequence numbers. */
  replayLast(count = 1, t = 'MESSAGE_CREATE'): void {
    for (const session of this.sessions.values()) {
      if (!session.ws) continue;
      for (const frame of session.events.filter((f) => f.t === t).slice(-count)) session.ws.send(JSON.stringify(frame));
    }
  }

  get liveConnections(): number {
    return this.liveSockets().length;
  }

  private liveSockets(): WebSocket[] {
    return [...this.sessions.values()].flatMap((s) => (s.ws && s.ws.readyState === WebSocket.OPEN ? [s.ws] : []));
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.sessions.clear();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }

  private onConnection(ws: WebSocket, req: IncomingMessage): void {
    const query = new URL(req.url ?? '/', 'ws://stand-in').searchParams;
    if (query.get('v') !== '10') return ws.close(CloseCode.InvalidApiVersion, CLOSE_REASONS[CloseCode.InvalidApiVersion]);
    if (query.get('encoding') !== 'json') return ws.close(CloseCode.DecodeError, CLOSE_REASONS[CloseCode.DecodeError]);

    let session: Session | null = null;
    ws.send(JSON.stringify({ op: Op.Hello, d: { heartbeat_interval: this.opts.heartbeatIntervalMs }, s: null, t: null }));
    ws.on('message', (data) => {
      let payload: { op?: unknown; d?: unknown };
      try {
        payload = JSON.parse(String(data)) as { op?: unknown; d?: unknown };
      } catch {
        return ws.close(CloseCode.DecodeError, CLOSE_REASONS[CloseCode.DecodeError]);
      }
      const d = typeof payload.d === 'object' && payload.d !== null ? (payload.d as JsonObject) : {};
      switch (payload.op) {
        case Op.Heartbeat: {
          ws.send(JSON.stringify({ op: Op.HeartbeatAck }));
          for (const resolve of this.heartbeatWaiters.get(ws)?.splice(0) ?? []) resolve();
          return;
        }
        case Op.Identify:
          if (session) return ws.close(CloseCode.AlreadyAuthenticated, CLOSE_REASONS[CloseCode.AlreadyAuthenticated]);
          session = this.identify(ws, d);
          return;
        case Op.Resume:
          if (session) return ws.close(CloseCode.AlreadyAuthenticated, CLOSE_REASONS[CloseCode.AlreadyAuthenticated]);
          session = this.resume(ws, d);
          return;
        case Op.PresenceUpdate:
        case Op.VoiceStateUpdate:
        case Op.RequestGuildMembers:
          if (!session) return ws.close(CloseCode.NotAuthenticated, CLOSE_REASONS[CloseCode.NotAuthenticated]);
          return;
        default:
          return ws.close(CloseCode.UnknownOpcode, CLOSE_REASONS[CloseCode.UnknownOpcode]);
      }
    });
    ws.on('close', () => {
      if (session && session.ws === ws) session.ws = null;
      this.heartbeatWaiters.delete(ws);
    });
    ws.on('error', () => undefined);
  }

  private identify(ws: WebSocket, d: JsonObject): Session | null {
    this.identifyCount += 1;
    const rejection = this.identifyRejections.shift();
    if (rejection !== undefined) {
      ws.close(rejection, CLOSE_REASONS[rejection] ?? 'Rejected by the stand-in');
      return null;
    }
    if (d.token !== this.opts.token) {
      ws.close(CloseCode.AuthenticationFailed, CLOSE_REASONS[CloseCode.AuthenticationFailed]);
      return null;
    }
    const intents = typeof d.intents === 'number' ? d.intents : NaN;
    if (!Number.isInteger(intents) || intents < 0 || (intents & ~ALL_INTENTS) !== 0) {
      ws.close(CloseCode.InvalidIntents, CLOSE_REASONS[CloseCode.InvalidIntents]);
      return null;
    }
    if ((intents & Intents.MessageContent) !== 0 && !this.opts.messageContentAllowed()) {
      ws.close(CloseCode.DisallowedIntents, CLOSE_REASONS[CloseCode.DisallowedIntents]);
      return null;
    }
    const session: Session = { id: randomBytes(16).toString('hex'), intents, seq: 0, events: [], ws, replayOnResume: 0 };
    this.sessions.set(session.id, session);
    const { world } = this.opts;
    this.push(session, 'READY', {
      v: 10,
      user_settings: {},
      user: { ...userJson(world.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: [...world.guilds.keys()].map((id) => ({ id, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.opts.url(),
      shard: [0, 1],
      application: { id: world.bot.id, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      geo_ordered_rtc_regions: [],
      session_type: 'normal',
      auth: {},
    });
    // Every guild listed unavailable in READY must follow as GUILD_CREATE, or clients wait ~15 s before 'ready'.
    const joinedAt = new Date().toISOString();
    if (intents & Intents.Guilds) {
      for (const guild of world.guilds.values()) this.push(session, 'GUILD_CREATE', world.guildCreate(guild, joinedAt));
    }
    return session;
  }

  private resume(ws: WebSocket, d: JsonObject): Session | null {
    this.resumeCount += 1;
    const session = typeof d.session_id === 'string' ? this.sessions.get(d.session_id) : undefined;
    if (d.token !== this.opts.token) {
      ws.close(CloseCode.AuthenticationFailed, CLOSE_REASONS[CloseCode.AuthenticationFailed]);
      return null;
    }
    if (!session) {
      // Not resumable: the client must IDENTIFY again.
      ws.send(JSON.stringify({ op: Op.InvalidSession, d: false, s: null, t: null }));
      return null;
    }
    if (session.ws && session.ws !== ws) session.ws.terminate();
    session.ws = ws;
    const clientSeq = typeof d.seq === 'number' ? d.seq : 0;
    const from = Math.max(0, clientSeq - session.replayOnResume);
    session.replayOnResume = 0;
    for (const frame of session.events) if (frame.s > from) ws.send(JSON.stringify(frame));
    this.push(session, 'RESUMED', {});
    return session;
  }

  private push(session: Session, t: string, d: unknown): void {
    session.seq += 1;
    const frame: DispatchFrame = { op: Op.Dispatch, s: session.seq, t, d };
    session.events.push(frame);
    if (session.events.length > SESSION_BUFFER) session.events.shift();
    if (session.ws && session.ws.readyState === WebSocket.OPEN) session.ws.send(JSON.stringify(frame));
  }
}
