/**
 * `npm run bench`: every benchmark, figures and ratios printed. Never part of `npm test` — these machines are
 * shared and noisy, so numbers are for comparing runs on one machine, not pass/fail.
 */
import { benchAgentLoop } from './agent-loop.js';
import { benchFloor } from './floor.js';
import { benchQueue } from './queue.js';

console.log('# agent loop: overhead per API call against a zero-latency stand-in');
await benchAgentLoop();
console.log('\n# queue: ingress → queue → worker → LLM stand-in → SQLite → Telegram stand-in');
const queue = await benchQueue();
console.log('\n# floor: a plain pipeline with the same libraries and stand-ins (bench/floor.ts)');
const floor = await benchFloor();
console.log('\n# Herald ÷ floor');
const ratio = (name: string, value: number): void => console.log(`herald_to_floor.${name} = ${value.toFixed(2)}`);
if (queue.messages_per_s && floor.messages_per_s) ratio('messages_per_s', queue.messages_per_s / floor.messages_per_s);
if (queue.concurrent_finish_s && floor.concurrent_finish_s) ratio('concurrent_finish_s', queue.concurrent_finish_s / floor.concurrent_finish_s);
if (queue.concurrent_peak_rss_mb && floor.concurrent_peak_rss_mb) ratio('concurrent_peak_rss_mb', queue.concurrent_peak_rss_mb / floor.concurrent_peak_rss_mb);
process.exit(0);
