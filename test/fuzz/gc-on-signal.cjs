/**
 * Preloaded into a fuzzed gateway (NODE_OPTIONS="--expose-gc --require <this file>", see harness.ts): on SIGUSR2
 * it runs a full garbage collection and then says so on stdout, so the test reads the memory that is really
 * kept rather than wherever the collector's sawtooth happens to be. Test-only; nothing in Herald loads it.
 */
'use strict';

let collections = 0;
process.on('SIGUSR2', () => {
  globalThis.gc();
  collections += 1;
  process.stdout.write(`${JSON.stringify({ msg: 'fuzz: garbage collected', collections })}\n`);
});
