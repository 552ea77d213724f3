/**
 * `npm start [-- --role all|ingress|worker]`: one process of the given role (default `all`).
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, configSecrets, loadConfig, type Role } from './support/config/load.js';
import { createLogger, routeConsoleToLogger } from './support/logger.js';
import { RedisUnavailableError } from './support/redis.js';
import { ModelNotConfiguredError } from './support/config/providers.js';
import { UnsafeSetupError } from './support/ops/safety/checks.js';
import { watchProcessFailures } from './support/ops/process-failures.js';
import { startHerald, type Herald } from './roles/app.js';
import { describeStoreTarget, isPermanentStoreError, storeTarget } from './features/sessions/store-target.js';

/** Default drain (7 s) + closing connections stays within 10 s; a longer drain setting extends it. */
const SHUTDOWN_MARGIN_MS = 3_000;
const ROLES: readonly Role[] = ['all', 'ingress', 'worker'];

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { role: { type: 'string' }, config: { type: 'string' } },
    allowPositionals: true,
  });
  const role = (values.role ?? process.env.HERALD_ROLE ?? 'all') as Role;
  if (!ROLES.includes(role)) fail(`--role: must be one of ${ROLES.join(', ')} (got ${JSON.stringify(values.role)})`, 2);

  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ role, file: values.config });
  } catch (err) {
    if (err instanceof ConfigError) fail(`Configuration error: ${err.message}`, 2);
    throw err;
  }
  const log = createLogger({
    level: config.logLevel,
    secrets: configSecrets(config),
    ...(config.sessionLogDir ? { sessionLogDir: config.sessionLogDir } : {}),
  });
  routeConsoleToLogger(log);
  watchProcessFailures(log);

  // Signals are handled from the very start: a SIGTERM while starting stops what has started (closing the
  // connections opened so far) and exits 0, instead of the default handler killing the process mid-start.
  const starting = new AbortController();
  let herald: Herald | null = null;
  let stopRequested = false;
  const stopAndExit = (h: Herald): void => {
    h.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const shutdown = (signal: string): void => {
    if (stopRequested) return;
    stopRequested = true;
    log.info({ signal, starting: herald === null }, 'shutting down');
    const limit = config.drainTimeoutMs + SHUTDOWN_MARGIN_MS;
    const timer = setTimeout(() => {
      log.error(`shutdown took longer than ${limit} ms; exiting anyway`);
      process.exit(1);
    }, limit);
    timer.unref();
    if (herald) stopAndExit(herald);
    else starting.abort(new Error(`${signal} during start-up`));
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  try {
    herald = await startHerald(config, log, starting.signal);
  } catch (err) {
    if (stopRequested) {
      // startHerald closed what it had opened before rethrowing.
      log.info('stopped');
      process.exit(0);
    }
    if (err instanceof RedisUnavailableError) fail(err.message, 1);
    if (err instanceof UnsafeSetupError) fail(`Refusing to start: ${err.message}`, 1);
    // A model setting naming an endpoint, key or API that is not there: as bad a setting as any ConfigError.
    if (err instanceof ModelNotConfiguredError) fail(`Configuration error: ${err.message}`, 2);
    if (isPermanentStoreError(err)) {
      const where = describeStoreTarget(storeTarget(config));
      fail(`Cannot open the PostgreSQL store at ${where}: ${(err as Error).message}. Check HERALD_DATABASE_URL (user, password, database name).`, 1);
    }
    log.fatal({ err }, 'start-up failed');
    await flushAndExit(1);
    return;
  }
  // Asked to stop in the moment between the last start-up step and here.
  if (stopRequested) stopAndExit(herald);
}

/** One line on stderr, then exit: what a person sees when start-up cannot go on. */
function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function flushAndExit(code: number): Promise<void> {
  await new Promise((r) => setTimeout(r, 50));
  process.exit(code);
}

const isEntry = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isEntry) void main();
