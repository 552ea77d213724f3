/**
 * The gateway the benchmarks run: its compiled JavaScript (`npm run build`), as `npm start` and the Docker image
 * run it, not its TypeScript sources through tsx (which transpiles on load and wraps every named function and
 * closure in a `__name` call: ≈ 10 % more CPU per message and ≈ 30 MB more live heap in the 5,000-turn run).
 * BENCH_FROM_SOURCE=1 runs the sources instead, for iterating without a build.
 *
 * Compiled, the workspace packages must resolve to their dist too: the process needs `--conditions=@herald/dist`
 * (BENCH_NODE_ARGS holds it, with tsx for the benchmark's own files); `npm run bench` sets both.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type * as AppModule from '../apps/gateway/src/roles/app.js';
import type * as ConfigModule from '../apps/gateway/src/support/config/load.js';
import type * as LoggerModule from '../apps/gateway/src/support/logger.js';

const DIST_CONDITION = '--conditions=@herald/dist';
const fromSource = process.env.BENCH_FROM_SOURCE === '1';

/** How a benchmark's child process is started: tsx for the benchmark's files, and the dist condition unless from source. */
export const BENCH_NODE_ARGS = ['--import', 'tsx', ...(fromSource ? [] : [DIST_CONDITION])];

type GatewayModules = { app: typeof AppModule; config: typeof ConfigModule; logger: typeof LoggerModule };
let loaded: Promise<GatewayModules> | undefined;

/** The gateway's modules, loaded on first use (the floor, importing bench/queue.ts for its stand-ins, never asks). */
export function gateway(): Promise<GatewayModules> {
  return (loaded ??= gatewayModules());
}

async function gatewayModules(): Promise<GatewayModules> {
  const root = join(import.meta.dirname, '..', 'apps', 'gateway', fromSource ? 'src' : 'dist');
  if (!fromSource) {
    if (!existsSync(join(root, 'roles', 'app.js')))
      throw new Error('the benchmarks run the compiled gateway: run `npm run build` first (or set BENCH_FROM_SOURCE=1)');
    if (!process.execArgv.includes(DIST_CONDITION)) {
      throw new Error(`the compiled gateway needs node ${DIST_CONDITION} (npm run bench sets it), else its packages load from their sources`);
    }
  }
  const load = <T>(file: string): Promise<T> => import(join(root, file)) as Promise<T>;
  const [app, config, logger] = await Promise.all([
    load<typeof AppModule>('roles/app.js'),
    load<typeof ConfigModule>('support/config/load.js'),
    load<typeof LoggerModule>('support/logger.js'),
  ]);
  return { app, config, logger };
}
