/**
 * PostgreSQL statements outside a transaction, sent on a few connections in pg's pipeline mode: a statement is
 * written at once, behind the ones still running on that connection, instead of waiting for a pooled connection
 * of its own. Each statement keeps its own Sync, so it is still its own implicit transaction and fails alone.
 *
 * Why: with one statement per pooled connection at a time, every statement woke its own server process and
 * waited for it; on the queue bench's two cores the server's CPU a message fell by a third and messages/s rose by
 * about a fifth with two pipelined connections instead (bench/RESULTS.md). Transactions keep the pool (a transaction
 * holds its connection between statements).
 *
 * A statement goes to the connection with the fewest statements in flight, so a slow one (a search, an admin
 * listing) holds up only what was already behind it. A connection that fails or ends is dropped; the next
 * statement makes a new one.
 */
import pg from 'pg';

/** Pipelined connections per store. Two measured best on the queue bench (one: less overlap; four: more wake-ups). */
export const PIPELINED_CONNECTIONS = 2;

interface Pipe {
  client: Promise<pg.Client>;
  inFlight: number;
}

export class PipelinedConnections {
  private readonly pipes: Array<Pipe | undefined>;
  private closed = false;

  /**
   * `config`: every connection's settings (URL, types, connect timeout); `onIdleError`: pg's errors on a connection
   * no statement was waiting on (a server restart), logged by the caller, never thrown.
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly onIdleError?: (err: Error) => void,
    size = PIPELINED_CONNECTIONS,
  ) {
    this.pipes = Array.from({ length: size }, () => undefined);
  }

  async query(query: pg.QueryConfig): Promise<pg.QueryResult> {
    if (this.closed) throw new Error('Client was closed and is not queryable');
    const pipe = this.leastBusy();
    pipe.inFlight++;
    try {
      const client = await pipe.client;
      return await client.query(query);
    } finally {
      pipe.inFlight--;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = this.pipes.filter((p): p is Pipe => p !== undefined);
    this.pipes.fill(undefined);
    await Promise.all(open.map(async (p) => (await p.client.catch(() => null))?.end().catch(() => undefined)));
  }

  private leastBusy(): Pipe {
    let best = 0;
    for (let i = 0; i < this.pipes.length; i++) {
      const pipe = this.pipes[i];
      if (pipe === undefined) return this.open(i);
      if (pipe.inFlight < (this.pipes[best]?.inFlight ?? 0)) best = i;
    }
    return this.pipes[best] as Pipe;
  }

  private open(slot: number): Pipe {
    const client = new pg.Client({ ...this.config, pipeline: true });
    const pipe: Pipe = { client: Promise.resolve(client), inFlight: 0 };
    const drop = (): void => {
      if (this.pipes[slot] === pipe) this.pipes[slot] = undefined;
    };
    // Unheard, a lost connection's error event would be an uncaught exception (the process exits on those).
    client.on('error', (err) => {
      drop();
      this.onIdleError?.(err);
    });
    client.on('end', drop);
    pipe.client = client.connect().then(
      () => client,
      (err: unknown) => {
        drop();
        throw err;
      },
    );
    this.pipes[slot] = pipe;
    return pipe;
  }
}
