/**
 * Preloaded into a fuzzed gateway (NODE_OPTIONS="--expose-gc --require <this file>", see harness.ts): on SIGUSR2
 * it runs a full garbage collection and then says so on stdout, so the test reads the memory that is really
 * kept rather than wherever the collector's sawtooth happens to be. The collection is V8's last-resort one, which
 * also compacts and gives back the heap's free pages: after a plain one, a run of payloads sent back to back left
 * the old space committed at twice what it held (Matrix: RSS +100 to +240 MB over the run, heap used +5 MB), and
 * RSS would measure the burst, not a leak. Test-only; nothing in Herald loads it.
 */
'use strict';

let collections = 0;
process.on('SIGUSR2', () => {
  globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  collections += 1;
  process.stdout.write(`${JSON.stringify({ msg: 'fuzz: garbage collected', collections })}\n`);
});
