/**
 * WAL checkpoints in a thread of their own. SQLite's automatic checkpoint runs inside the COMMIT that crosses the
 * page threshold, on the committing connection: copying ~4 MB back into the main file and syncing it, on the
 * gateway's only thread. In the queue benchmark that made one COMMIT in ~40 take 5–45 ms (the event loop stopped
 * meanwhile) and was the main source of the paced runs' p99. Here a second connection, in a worker thread, runs a
 * passive checkpoint every CHECKPOINT_EVERY_MS: in WAL mode it never blocks the gateway's readers or writers, and
 * the gateway's connection keeps an automatic checkpoint only as a backstop (WAL_BACKSTOP_PAGES) should this thread
 * fall behind or die.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the thread copies the WAL back (a passive checkpoint with nothing to copy costs microseconds). */
const CHECKPOINT_EVERY_MS = 250;
/** The gateway connection's own automatic checkpoint while the thread runs: a bound on the WAL (~40 MB), not the rule. */
export const WAL_BACKSTOP_PAGES = 10_000;

/** Plain CommonJS, run with `eval` so it needs no compiled file of its own (the same under tsx, vitest and dist). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
db.pragma('synchronous = NORMAL');
const checkpoint = () => {
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    // Said only when there was something to copy: the WAL's frames, and how many of them are in the main file now.
    if (r && r.log > 0) parentPort.postMessage({ type: 'checkpointed', log: r.log, checkpointed: r.checkpointed });
  } catch (err) {
    // Busy (another checkpoint at that moment) or locked: the next round catches up.
  }
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Resolves after the next round that found the WAL copied back completely (tests wait for it). */
  caughtUp(): Promise<void>;
  /** One last checkpoint, then the thread's connection closes and the thread ends. */
  stop(): Promise<void>;
}

/** Starts the checkpoint thread on `file` (a WAL-mode SQLite file the caller has open). It never keeps the process alive. */
export function startCheckpointer(file: string, everyMs = CHECKPOINT_EVERY_MS): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file, driver, everyMs } });
  worker.unref();
  let waiting: Array<() => void> = [];
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('message', (m: { type: string; log: number; checkpointed: number }) => {
    if (m.type !== 'checkpointed' || m.checkpointed < m.log) return;
    const wake = waiting;
    waiting = [];
    for (const w of wake) w();
  });
  // A thread that fails (the file gone, the driver missing) only leaves checkpoints to the backstop.
  worker.on('error', () => {});
  return {
    caughtUp: () => new Promise<void>((resolve) => waiting.push(resolve)),
    async stop() {
      worker.postMessage('stop');
      await exited;
    },
  };
}
