/**
 * `herald doctor`: checks what Herald needs, one line per check, with real calls — Redis PING, the SQLite file,
 * each configured platform's token (Telegram getMe, Discord users/@me, Slack auth.test) and each model with a
 * tiny request. After Redis and the store, one line per operator-safety finding (ops/safety/): persistence,
 * eviction policy and version of Redis; the SQLite file's filesystem and free disk, or PostgreSQL's indexes and
 * version. Exits non-zero naming every check that failed. Warnings (nothing configured yet, a Redis without
 * persistence) do not fail; risks named in HERALD_ACCEPT_RISKS pass and say they were accepted. With Sentinels or
 * replicas configured, the replication set-up too (doctor-replication.ts); a paused turn queue is a warning.
 */
import { createProvider } from '@herald/agent-core';
import { ConfigError, loadConfig, type HeraldConfig } from '../support/config/load.js';
import { connectRedis, describeRedisTarget, redisTarget } from '../support/redis.js';
import { replicationLines } from './doctor-replication.js';
import { PAUSED_QUEUE_HINT, turnQueuePaused } from '../queue/paused.js';
import { ProviderCatalog, providerConfig } from '../support/config/providers.js';
import { RedisKeyPoolState } from '../features/llm/redis-key-state.js';
import { describeStoreTarget, openConfiguredStore, storeKind, storeTarget } from '../features/sessions/store-target.js';
import { redisFindings, storeFindings } from '../support/ops/safety/checks.js';
import { describeFinding, type SafetyFinding } from '../support/config/risks.js';

/** Per check: a hung endpoint must not hang the doctor. */
const CHECK_TIMEOUT_MS = 15_000;
/** Enough for any model to say something; small enough to cost nothing. */
const MODEL_PROBE_MAX_TOKENS = 16;
const NAME_WIDTH = 17;

type CheckStatus = 'ok' | 'warn' | 'fail';

interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
}

/** `more` reports further lines that belong under this check (the safety findings of a connection). */
type Check = { name: string; run: (signal: AbortSignal, more: (r: CheckResult) => void) => Promise<string> };

class Warning extends Error {}

export async function doctor(opts: { configFile?: string; env?: NodeJS.ProcessEnv; out?: (line: string) => void }): Promise<number> {
  const out = opts.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const results: CheckResult[] = [];
  const report = (r: CheckResult): void => {
    results.push(r);
    const mark = r.status === 'ok' ? '✓' : r.status === 'warn' ? '!' : '✗';
    out(`${mark} ${r.name.padEnd(NAME_WIDTH)} ${r.detail}`);
  };

  let config: HeraldConfig;
  try {
    config = loadConfig({ env: opts.env, file: opts.configFile });
    report({ name: 'config', status: 'ok', detail: config.configFile ? `environment + ${config.configFile}` : 'environment (no herald.yaml)' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    report({ name: 'config', status: 'fail', detail: err.message });
    return summary(results, out);
  }

  for (const check of checksFor(config)) {
    const more: CheckResult[] = [];
    report(await runCheck(check, more));
    for (const r of more) report(r);
  }
  return summary(results, out);
}

function summary(results: CheckResult[], out: (line: string) => void): number {
  const failed = results.filter((r) => r.status === 'fail').map((r) => r.name);
  const warned = results.filter((r) => r.status === 'warn').map((r) => r.name);
  if (failed.length === 0) {
    out(warned.length === 0 ? `doctor: all ${results.length} checks passed` : `doctor: no check failed; warnings: ${warned.join(', ')}`);
    return 0;
  }
  out(`doctor: ${failed.length} of ${results.length} checks failed: ${failed.join(', ')}`);
  return 1;
}

async function runCheck(check: Check, more: CheckResult[]): Promise<CheckResult> {
  const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
  try {
    return { name: check.name, status: 'ok', detail: await check.run(signal, (r) => more.push(r)) };
  } catch (err) {
    const detail = signal.aborted ? `no answer within ${CHECK_TIMEOUT_MS / 1000} s` : errorText(err);
    return { name: check.name, status: err instanceof Warning ? 'warn' : 'fail', detail };
  }
}

function checksFor(config: HeraldConfig): Check[] {
  const checks: Check[] = [
    {
      name: 'redis',
      run: async (_signal, more) => {
        const redis = await connectRedis(redisTarget(config));
        try {
          for (const f of await redisFindings(redis, config)) more(findingResult(f));
          for (const line of await replicationLines(redis, config)) more(line);
          if (await turnQueuePaused(redis, config.redisPrefix)) more({ name: 'turn queue', status: 'warn', detail: PAUSED_QUEUE_HINT });
        } finally {
          redis.disconnect();
        }
        return `${describeRedisTarget(redisTarget(config))} answered PING`;
      },
    },
    {
      name: storeKind(config),
      run: async (_signal, more) => {
        const where = describeStoreTarget(storeTarget(config));
        const store = await openConfiguredStore(config).catch((err: unknown) => {
          throw new Error(`${where}: ${err instanceof Error ? err.message : String(err)}`);
        });
        try {
          await store.ping();
          for (const f of await storeFindings(store, config)) more(findingResult(f));
        } finally {
          await store.close();
        }
        return `${where} opened (migrations applied)`;
      },
    },
  ];
  checks.push(...platformChecks(config));
  checks.push(...keyPoolChecks(config));
  const ownModels = config.model ? [config.model, ...config.fallbackModels] : [];
  if (ownModels.length === 0) {
    checks.push({ name: 'model', run: async () => Promise.reject(new Warning('HERALD_MODEL is not set: turns answer with a setup hint')) });
  }
  // Agent profiles' own models (HERALD_PROFILES) are probed like HERALD_MODEL.
  const profileModels = Object.values(config.profiles)
    .flatMap((p) => [p.model, ...(p.fallback_models ?? [])])
    .filter((r): r is string => typeof r === 'string');
  const models = [...new Set([...ownModels, ...profileModels])];
  // Side-task models (HERALD_AUXILIARY_MODEL and its fallbacks): a spent account there costs summaries, not turns.
  const sideModels = [config.auxiliaryModel, ...config.auxiliaryFallbackModels].filter((r): r is string => typeof r === 'string' && !models.includes(r));
  for (const [ref, name] of [...models.map((r) => [r, models.length > 1 ? `model ${r}` : 'model']), ...sideModels.map((r) => [r, `side model ${r}`])]) {
    checks.push({
      name,
      run: async (signal) => {
        const provider = createProvider(providerConfig(config, ref));
        const started = Date.now();
        await provider.complete({
          systemPrompt: 'You are a health check. Reply with OK.',
          messages: [{ role: 'user', content: 'ping' }],
          tools: [],
          maxTokens: MODEL_PROBE_MAX_TOKENS,
          signal,
        });
        return `${ref} answered in ${Date.now() - started} ms`;
      },
    });
  }
  return checks;
}

/** One check per configured platform (its token asked who it is), or a warning when none is configured. */
function platformChecks(config: HeraldConfig): Check[] {
  const checks: Check[] = [];
  const { telegram, discord, slack } = config;
  if (config.platforms.telegram.enabled && telegram.botToken) {
    const token = telegram.botToken;
    checks.push({
      name: 'telegram',
      run: async (signal) => {
        const body = await getJson(`${telegram.apiRoot.replace(/\/$/, '')}/bot${token}/getMe`, {}, signal, 'TELEGRAM_BOT_TOKEN');
        const result = body.result as { username?: string } | undefined;
        if (body.ok !== true) throw new Error(`getMe refused: ${String(body.description)} (check TELEGRAM_BOT_TOKEN)`);
        return `getMe: @${result?.username ?? '?'}`;
      },
    });
  }
  if (config.platforms.discord.enabled && discord.botToken) {
    const token = discord.botToken;
    checks.push({
      name: 'discord',
      run: async (signal) => {
        const me = await getJson(`${discord.apiUrl.replace(/\/$/, '')}/v10/users/@me`, { authorization: `Bot ${token}` }, signal, 'DISCORD_BOT_TOKEN');
        return `users/@me: ${String(me.username)} (${String(me.id)})`;
      },
    });
  }
  if (config.platforms.slack.enabled && slack.botToken) {
    const token = slack.botToken;
    checks.push({
      name: 'slack',
      run: async (signal) => {
        const res = await slackCall(slack.apiUrl, 'auth.test', token, signal, 'SLACK_BOT_TOKEN');
        return `auth.test: ${String(res.user)} in ${String(res.team)}`;
      },
    });
    const appToken = slack.appToken;
    if (appToken) {
      checks.push({
        name: 'slack app',
        // The Socket Mode token: asking for a connection URL proves it (the URL is never used and expires).
        run: async (signal) => {
          await slackCall(slack.apiUrl, 'apps.connections.open', appToken, signal, 'SLACK_APP_TOKEN');
          return 'apps.connections.open: Socket Mode token accepted';
        },
      });
    }
  }
  const whatsapp = whatsappCheck(config);
  if (whatsapp) checks.push(whatsapp);
  const matrix = matrixCheck(config);
  if (matrix) checks.push(matrix);
  if (!Object.values(config.platforms).some((p) => p.enabled)) {
    checks.push({
      name: 'platforms',
      run: async () =>
        Promise.reject(
          new Warning('none configured: set TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN, SLACK_BOT_TOKEN, WHATSAPP_ACCESS_TOKEN or MATRIX_ACCESS_TOKEN'),
        ),
    });
  }

  return checks;
}

function findingResult(f: SafetyFinding): CheckResult {
  return { name: f.check, status: f.status === 'error' ? 'fail' : f.status, detail: describeFinding(f) };
}

/** One line per key pool: each key by fingerprint with its state as every process sees it (Redis). */
function keyPoolChecks(config: HeraldConfig): Check[] {
  return (
    Object.entries(config.keyPools)
      // A single key is no pool: the model check already says whether it works.
      .filter(([, keys]) => keys.length > 1)
      .map(([label]) => ({
        name: `keys ${label}`,
        run: async () => {
          const redis = await connectRedis(redisTarget(config));
          try {
            const catalog = new ProviderCatalog(config, { keyState: new RedisKeyPoolState(redis, config.redisPrefix) });
            const pool = (await catalog.status()).find((p) => p.pool === label);
            const keys = pool?.keys ?? [];
            const shown = keys.map((k) =>
              k.state === 'ready'
                ? `${k.fingerprint} ready (${k.uses} uses)`
                : `${k.fingerprint} cooling ${Math.ceil((k.cooldownRemainingMs ?? 0) / 1000)} s: ${k.reason ?? ''}`,
            );
            const line = `${keys.length} key${keys.length === 1 ? '' : 's'}, ${pool?.strategy ?? ''}: ${shown.join('; ')}`;
            if (keys.some((k) => k.state === 'cooling')) throw new Warning(line);
            return line;
          } finally {
            redis.disconnect();
          }
        },
      }))
  );
}

async function getJson(url: string, headers: Record<string, string>, signal: AbortSignal, envName: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, { headers, signal }).catch((err: unknown) => {
    throw new Error(`cannot reach ${new URL(url).origin} (${errorText(err)})`);
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.status === 401 || res.status === 403 || res.status === 404) {
    throw new Error(`${res.status} ${res.statusText}: the token was refused (check ${envName})`);
  }
  if (!res.ok) throw new Error(`${res.status} ${res.statusText}`);
  return body;
}

/** The access token and the phone number ID together: Graph answers `GET /<phone-number-id>` with the number. */
function whatsappCheck(config: HeraldConfig): Check | null {
  const { accessToken, phoneNumberId, apiUrl } = config.whatsapp;
  if (!config.platforms.whatsapp.enabled || !accessToken || !phoneNumberId) return null;
  return {
    name: 'whatsapp',
    run: async (signal) => {
      const url = `${apiUrl.replace(/\/$/, '')}/${phoneNumberId}?fields=display_phone_number,verified_name`;
      const body = await getJson(url, { authorization: `Bearer ${accessToken}` }, signal, 'WHATSAPP_ACCESS_TOKEN and WHATSAPP_PHONE_NUMBER_ID');
      return `phone number ${String(body.display_phone_number)} (${String(body.verified_name)})`;
    },
  };
}

/** `whoami` proves the access token, and that it is the account MATRIX_USER_ID names. */
function matrixCheck(config: HeraldConfig): Check | null {
  const { accessToken, homeserverUrl, userId } = config.matrix;
  if (!config.platforms.matrix.enabled || !accessToken || !homeserverUrl) return null;
  return {
    name: 'matrix',
    run: async (signal) => {
      const url = `${homeserverUrl.replace(/\/$/, '')}/_matrix/client/v3/account/whoami`;
      const body = await getJson(url, { authorization: `Bearer ${accessToken}` }, signal, 'MATRIX_ACCESS_TOKEN');
      if (body.user_id !== userId) throw new Error(`the token belongs to ${String(body.user_id)}, not MATRIX_USER_ID ${String(userId)}`);
      return `signed in as ${String(body.user_id)}`;
    },
  };
}

async function slackCall(apiUrl: string, method: string, token: string, signal: AbortSignal, envName: string): Promise<Record<string, unknown>> {
  const url = new URL(method, apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`).toString();
  const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}` }, signal }).catch((err: unknown) => {
    throw new Error(`cannot reach ${new URL(url).origin} (${errorText(err)})`);
  });
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (body.ok !== true) throw new Error(`${method}: ${String(body.error ?? `${res.status} ${res.statusText}`)} (check ${envName})`);
  return body;
}

function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause as NodeJS.ErrnoException | undefined;
  return cause?.code ? `${err.message}: ${cause.code}` : err.message;
}
