/**
 * PostgreSQL statements outside a transaction, sent on a few connections in pg's pipeline mode: a statement is
 * written at once, behind the ones still running on that connection, instead of waiting for a pooled connection
 * of its own. A read, or a write with none in flight before it, keeps its own Sync: its own implicit transaction.
 *
 * Why: with one statement per pooled connection at a time, every statement woke its own server process and
 * waited for it; on the queue bench's two cores the server's CPU a message fell by a third and messages/s rose by
 * about a fifth with two pipelined connections instead (bench/RESULTS.md). Transactions keep the pool (a transaction
 * holds its connection between statements).
 *
 * Writes are committed in groups, as on SQLite (sqlite-sql.ts). While a connection has a write in flight, the
 * writes that come for it wait, and go next as one transaction (BEGIN, the writes, COMMIT, written at once): one
 * commit, one flush of the server's log, for what would have been as many. A lone write goes at once, as before.
 * Each caller gets its own statement's result once the group has committed. If the server rolls the group back (a
 * write's error, a deadlock), each write runs again on its own, so a write that fails fails alone and the others
 * commit; if the connection is lost on the way, every write of the group fails as the connection's error (whether
 * the COMMIT landed is unknown, and the callers' own retries decide, as for a statement on its own).
 *
 * A statement goes to the connection with the fewest statements in flight, so a slow one (a search, an admin
 * listing) holds up only what was already behind it. A connection that fails or ends is dropped; the next
 * statement makes a new one.
 */
import pg from 'pg';

/** Pipelined connections per store. Two measured best on the queue bench (one: less overlap; four: more wake-ups). */
export const PIPELINED_CONNECTIONS = 2;

/** Writes in one group, at most: a group holds its rows' locks until its COMMIT. */
const MAX_GROUP = 64;

interface Pipe {
  client: Promise<pg.Client>;
  inFlight: number;
  /** Writes waiting for the write (or group) in flight on this connection to end; null when nothing is committing. */
  waiting: Waiting[] | null;
}

interface Waiting {
  query: pg.QueryConfig;
  resolve: (result: pg.QueryResult) => void;
  reject: (err: unknown) => void;
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

  /** `write`: a statement that changes rows, committed in a group with the writes that come while one is in flight. */
  async query(query: pg.QueryConfig, write = false): Promise<pg.QueryResult> {
    if (this.closed) throw new Error('Client was closed and is not queryable');
    const pipe = this.leastBusy();
    pipe.inFlight++;
    try {
      const client = await pipe.client;
      return await (write ? this.write(pipe, client, query) : client.query(query));
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

  /** A write with none in flight on the connection goes at once; one that comes meanwhile waits for the next group. */
  private write(pipe: Pipe, client: pg.Client, query: pg.QueryConfig): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      const committing = pipe.waiting !== null;
      (pipe.waiting ??= []).push({ query, resolve, reject });
      if (!committing) void this.commitWaiting(pipe, client);
    });
  }

  /** Commits the waiting writes group by group until none waits; writes that come meanwhile form the next group. */
  private async commitWaiting(pipe: Pipe, client: pg.Client): Promise<void> {
    for (let waiting = pipe.waiting ?? []; waiting.length > 0; waiting = pipe.waiting ?? []) {
      const group = waiting.splice(0, MAX_GROUP);
      await (group.length === 1 ? settle(group[0], client.query(group[0].query)) : commitGroup(client, group));
    }
    pipe.waiting = null;
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
    const pipe: Pipe = { client: Promise.resolve(client), inFlight: 0, waiting: null };
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

async function settle(w: Waiting, result: Promise<pg.QueryResult>): Promise<void> {
  await result.then(w.resolve, w.reject);
}

/**
 * BEGIN, the writes and COMMIT, written at once. Committed: each write's own outcome (one that pg refused to send
 * failed alone, the others committed). Rolled back by the server: each write again on its own. The connection lost
 * before the COMMIT's answer: every write fails with that error.
 */
async function commitGroup(client: pg.Client, group: Waiting[]): Promise<void> {
  const begin = client.query('BEGIN');
  const writes = group.map((w) => client.query(w.query));
  const commit = client.query('COMMIT');
  // Every outcome heard at once: a write's rejection unheard until the COMMIT's answer would count as unhandled.
  const settled = await Promise.allSettled([begin, ...writes, commit]);
  const began = settled[0];
  const ended = settled[settled.length - 1];
  const outcomes = settled.slice(1, -1);
  if (ended.status === 'fulfilled' && ended.value.command === 'COMMIT') {
    group.forEach((w, i) => {
      const o = outcomes[i];
      if (o.status === 'fulfilled') w.resolve(o.value);
      else w.reject(o.reason);
    });
    return;
  }
  const lost = [ended, began].find((o): o is PromiseRejectedResult => o.status === 'rejected' && !(o.reason instanceof pg.DatabaseError));
  if (lost) {
    for (const w of group) w.reject(lost.reason);
    return;
  }
  await Promise.all(group.map((w) => settle(w, client.query(w.query))));
}
