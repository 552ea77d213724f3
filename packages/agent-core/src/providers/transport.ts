/**
 * The HTTP connections of one SDK client: each client (one per API key, `ClientPool` in request.ts) gets its own,
 * and is rebuilt on fresh ones after a transport failure (a stalled stream, a reset connection, a timeout). Node's global fetch shares one pool across the process, so a retry
 * after a network hiccup could pick up a dead keep-alive socket again; fresh agents cannot.
 *
 * The old client is retired, not closed: its idle connections close at once, but the requests other turns have in
 * flight on it run to their end (each has its own stall watchdog). Closing it cut them all: one keep-alive socket
 * the server had just closed failed one request, and the rebuild then failed every other stream on that key with
 * "socket hang up" — in the 5,000-turn benchmark, 4,998 model calls made twice.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { Dispatcher, Pool, fetch as undiciFetch } from 'undici';
import { httpFetch, type FetchFn } from './http-fetch.js';

export interface Transport {
  fetch: FetchFn;
  /** Keep no connection alive from now on: idle ones close now, busy ones once their answer is read. */
  retire(): void;
  /** Cut every connection, busy ones too. */
  close(): void;
}

/** An agent that keeps no connection alive any more (its 'free' handler then destroys each socket it gets back). */
export function retireAgent(agent: HttpAgent): void {
  agent.maxFreeSockets = 0;
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of [...(sockets ?? [])]) socket.destroy();
}

/**
 * A connection pool per origin (an SDK client talks to one), without undici's Agent on top: the Agent checks every
 * connection of the origin each time one of them closes (`closeClientIfUnused`), so 5,000 streams in flight closing
 * their connections cost 25 million checks — ≈ 3 % of a worker's CPU in the 5,000-turn benchmark.
 */
export class OriginPools extends Dispatcher {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly options: Pool.Options) {
    super();
  }

  override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(opts.origin);
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, this.options);
      this.pools.set(origin, pool);
    }
    return pool.dispatch(opts, handler);
  }

  /** How many origins have a pool (a transport serves one). */
  get origins(): number {
    return this.pools.size;
  }

  override close(): Promise<void>;
  override close(callback: () => void): void;
  override close(callback?: () => void): Promise<void> | void {
    return this.onEveryPool((p) => p.close(), callback);
  }

  override destroy(err: Error | null, callback: () => void): void;
  override destroy(callback: () => void): void;
  override destroy(err: Error | null): Promise<void>;
  override destroy(): Promise<void>;
  override destroy(err?: Error | null | (() => void), callback?: () => void): Promise<void> | void {
    const cause = typeof err === 'function' ? null : (err ?? null);
    return this.onEveryPool((p) => p.destroy(cause), typeof err === 'function' ? err : callback);
  }

  /** `step` on every pool; a promise of the lot, or (Dispatcher's callback form) `callback` once they are done. */
  private onEveryPool(step: (pool: Pool) => Promise<void>, callback?: () => void): Promise<void> | void {
    const done = Promise.all([...this.pools.values()].map(step)).then(() => undefined);
    if (!callback) return done;
    void done.then(callback, callback);
  }
}

/** Idle keep-alive connections close after this long (sooner when the server's Keep-Alive header says so). */
const KEEP_ALIVE_MS = 30_000;

/**
 * A fetch on private connections: Node's HTTP client with its own keep-alive agents (http-fetch.ts says why not
 * undici's fetch), and undici's fetch on its own pools for the rare request that client leaves to it.
 */
export function createTransport(): Transport {
  const agents = { http: new HttpAgent({ keepAlive: true, timeout: KEEP_ALIVE_MS }), https: new HttpsAgent({ keepAlive: true, timeout: KEEP_ALIVE_MS }) };
  const pools = new OriginPools({ keepAliveTimeout: KEEP_ALIVE_MS });
  const fallback: FetchFn = (input, init) =>
    // undici's own Request/Response types differ from the DOM lib's only nominally; this is the SDK boundary.
    undiciFetch(input as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: pools,
    }) as unknown as Promise<Response>;
  return {
    fetch: httpFetch(agents, fallback),
    retire: () => {
      retireAgent(agents.http);
      retireAgent(agents.https);
      // undici's close is graceful: what was dispatched finishes, then the connections close.
      void pools.close().catch(() => undefined);
    },
    close: () => {
      agents.http.destroy();
      agents.https.destroy();
      void pools.destroy().catch(() => undefined);
    },
  };
}
