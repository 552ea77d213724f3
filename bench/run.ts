/**
 * `npm run bench`: every benchmark, figures and ratios printed. Never part of `npm test` — these machines are
 * shared and noisy, so numbers are for comparing runs on one machine, not pass/fail.
 */
import { benchAgentLoop } from './agent-loop.js';
import { benchQueue } from './queue.js';

console.log('# agent loop: overhead per API call against a zero-latency stand-in');
await benchAgentLoop();
console.log('\n# queue: ingress → queue → worker → LLM stand-in → SQLite → Telegram stand-in');
await benchQueue();
process.exit(0);
