/**
 * Reads the environment and an optional herald.yaml, validates every value with its zod schema, and returns
 * a typed config. A bad value throws a ConfigError whose message is one line naming the variable.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isRecord } from '@herald/agent-core';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { interpolateServers, serverSecrets } from './mcp.js';
import { envPrefix, gatherKeys } from './endpoints.js';
import { SLACK_MAX_REPLICA_WAIT_MS } from '@herald/adapters/slack';
import { teamConfigProblem } from './team-check.js';
import { accountSecrets } from './profile-accounts.js';
import { SETTINGS, walkSettings, yamlPath, type Setting, type SettingsValues } from './settings.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Role = 'all' | 'ingress' | 'worker';

export interface PlatformStatus {
  enabled: boolean;
  /** Why it is disabled, or which transport it uses. */
  reason: string;
}

export interface HeraldConfig extends SettingsValues {
  role: Role;
  /** Where the YAML came from, if any. */
  configFile: string | null;
  platforms: { telegram: PlatformStatus; discord: PlatformStatus; slack: PlatformStatus; whatsapp: PlatformStatus; matrix: PlatformStatus };
  /** Keys per pool (`openai`, `anthropic`, each endpoint), gathered from every variable that holds one. */
  keyPools: Record<string, string[]>;
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** Path of herald.yaml; default `HERALD_CONFIG` or ./herald.yaml when it exists; null: no file. */
  file?: string | null;
  role?: Role;
}

export function loadConfig(opts: LoadOptions = {}): HeraldConfig {
  const env = opts.env ?? process.env;
  const file = opts.file === null ? undefined : (opts.file ?? env.HERALD_CONFIG ?? (existsSync('herald.yaml') ? 'herald.yaml' : undefined));
  const yaml = file ? readYaml(file) : {};
  const knownYamlKeys = new Set<string>();

  const out: Record<string, unknown> = {};
  for (const [path, s] of walkSettings()) {
    const yp = yamlPath(s.env);
    knownYamlKeys.add(yp.join('.'));
    const fromEnv = env[s.env];
    const fromYaml = getPath(yaml, yp);
    let raw: unknown;
    let source: string;
    if (fromEnv !== undefined && fromEnv !== '') {
      raw = fromEnv;
      source = s.env;
    } else if (fromYaml !== undefined && fromYaml !== null) {
      raw = fromYaml;
      source = `${file}: ${yp.join('.')}`;
    } else {
      raw = s.fallback;
      source = `${s.env} (default)`;
    }
    setPath(out, path, raw === undefined ? undefined : validate(s, raw, source));
  }
  rejectUnknownYamlKeys(yaml, knownYamlKeys, file);

  const values = out as unknown as SettingsValues;
  if (values.mcpServers) {
    // `${NAME}` placeholders are filled from the environment now, so a missing one stops start-up too.
    const filled = interpolateServers(values.mcpServers, env);
    if (typeof filled === 'string') throw new ConfigError(`HERALD_MCP_SERVERS: ${filled}`);
    out.mcpServers = filled;
  }
  const fallbacksNeedAModel: Array<[string, readonly string[], string | undefined]> = [
    ['AUXILIARY', values.auxiliaryFallbackModels, values.auxiliaryModel],
    ['COMPRESSION', values.compressionFallbackModels, values.compressionModel],
    ['TITLE', values.titleFallbackModels, values.titleModel],
    ['SEARCH', values.searchFallbackModels, values.searchModel],
    ['VISION', values.visionFallbackModels, values.visionModel],
  ];
  for (const [name, fallbacks, model] of fallbacksNeedAModel) {
    if (fallbacks.length > 0 && !model)
      throw new ConfigError(`HERALD_${name}_FALLBACK_MODELS: set HERALD_${name}_MODEL too (the fallbacks are tried after it)`);
  }
  // Routes, budgets and MCP servers name profiles and accounts: each must exist (support/config/team-check.ts).
  const team = teamConfigProblem(out as unknown as SettingsValues);
  if (team) throw new ConfigError(team);
  const role = opts.role ?? 'all';
  const platforms = platformStatus(values);
  const wait = replicaWaitProblem(values, platforms);
  if (wait) throw new ConfigError(wait);
  return { ...values, role, configFile: file ?? null, platforms, keyPools: keyPoolsOf(values, env) };
}

/**
 * Slack wants an event acknowledged within 3 s, and Herald acknowledges it after the hand-over, WAIT included: a
 * WAIT allowed to take longer would have Slack retry events that were only slow, so it is refused, not clamped
 * (one WAIT timeout serves every platform; a silently shorter one would surprise the others).
 */
function replicaWaitProblem(c: SettingsValues, platforms: HeraldConfig['platforms']): string | null {
  const slack = platforms.slack.enabled || c.botAccounts.some((a) => a.platform === 'slack');
  if (!slack || c.redisWaitReplicas === 0 || c.redisWaitTimeoutMs <= SLACK_MAX_REPLICA_WAIT_MS) return null;
  return (
    `HERALD_REDIS_WAIT_TIMEOUT_MS: must be at most ${SLACK_MAX_REPLICA_WAIT_MS} with Slack configured and HERALD_REDIS_WAIT_REPLICAS > 0 ` +
    `(got ${c.redisWaitTimeoutMs}): a Slack event is acknowledged after the WAIT, and Slack wants its answer within 3 s`
  );
}

function keyPoolsOf(c: SettingsValues, env: NodeJS.ProcessEnv): Record<string, string[]> {
  const pools: Record<string, string[]> = {
    openai: gatherKeys(env, 'OPENAI', c.openai.apiKey, c.openai.apiKeys),
    anthropic: gatherKeys(env, 'ANTHROPIC', c.anthropic.apiKey, c.anthropic.apiKeys),
  };
  for (const e of c.endpoints) {
    const prefix = envPrefix(e.name);
    pools[e.name] = gatherKeys(env, prefix, env[`${prefix}_API_KEY`], e.api_keys);
  }
  return pools;
}

function validate(s: Setting, raw: unknown, source: string): unknown {
  const result = (s.schema as z.ZodType).safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  // A mapping setting (mcp_servers) names the part that is wrong: `files.timeout_ms: must be at least 100`. (Lists
  // keep their messages as they are: an item's position says less than the message and the value shown.)
  const where = issue && typeof issue.path[0] === 'string' ? `${issue.path.map(String).join('.')}: ` : '';
  const shown = s.secret ? '(hidden)' : JSON.stringify(raw);
  throw new ConfigError(`${source}: ${where}${issue?.message ?? 'invalid value'} (got ${shown})`);
}

function platformStatus(c: SettingsValues): HeraldConfig['platforms'] {
  const telegram: PlatformStatus = c.telegram.botToken
    ? { enabled: true, reason: c.telegram.webhookUrl ? 'webhook' : 'long polling' }
    : { enabled: false, reason: 'TELEGRAM_BOT_TOKEN is not set' };
  const discord: PlatformStatus = c.discord.botToken
    ? { enabled: true, reason: 'gateway WebSocket' }
    : { enabled: false, reason: 'DISCORD_BOT_TOKEN is not set' };
  let slack: PlatformStatus;
  if (!c.slack.botToken) slack = { enabled: false, reason: 'SLACK_BOT_TOKEN is not set' };
  else if (c.slack.appToken) slack = { enabled: true, reason: 'Socket Mode' };
  else if (c.slack.signingSecret) slack = { enabled: true, reason: 'Events over HTTP at POST /slack/events' };
  else slack = { enabled: false, reason: 'SLACK_BOT_TOKEN is set but neither SLACK_APP_TOKEN (Socket Mode) nor SLACK_SIGNING_SECRET (Events over HTTP) is' };

  if (c.telegram.webhookUrl && !c.telegram.webhookSecret && telegram.enabled) {
    throw new ConfigError('TELEGRAM_WEBHOOK_SECRET: must be set when TELEGRAM_WEBHOOK_URL is (anyone could post updates otherwise)');
  }
  return { telegram, discord, slack, whatsapp: whatsappStatus(c), matrix: matrixStatus(c) };
}

function whatsappStatus(c: SettingsValues): PlatformStatus {
  const w = c.whatsapp;
  if (!w.accessToken) return { enabled: false, reason: 'WHATSAPP_ACCESS_TOKEN is not set' };
  const missing = [!w.phoneNumberId && 'WHATSAPP_PHONE_NUMBER_ID', !w.appSecret && 'WHATSAPP_APP_SECRET', !w.verifyToken && 'WHATSAPP_VERIFY_TOKEN'].filter(
    Boolean,
  );
  if (missing.length > 0) throw new ConfigError(`${missing.join(', ')}: must be set with WHATSAPP_ACCESS_TOKEN (the webhook cannot be verified otherwise)`);
  return { enabled: true, reason: 'Cloud API webhook at POST /whatsapp/webhook' };
}

function matrixStatus(c: SettingsValues): PlatformStatus {
  const m = c.matrix;
  if (!m.accessToken) return { enabled: false, reason: 'MATRIX_ACCESS_TOKEN is not set' };
  const missing = [!m.homeserverUrl && 'MATRIX_HOMESERVER_URL', !m.userId && 'MATRIX_USER_ID'].filter(Boolean);
  if (missing.length > 0) throw new ConfigError(`${missing.join(', ')}: must be set with MATRIX_ACCESS_TOKEN`);
  return { enabled: true, reason: '/sync long polling' };
}

function readYaml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`${file}: not valid YAML (${(err as Error).message.split('\n')[0]})`);
  }
  if (doc === null || doc === undefined) return {};
  if (!isRecord(doc)) throw new ConfigError(`${file}: must be a mapping of settings`);
  return doc;
}

function rejectUnknownYamlKeys(yaml: Record<string, unknown>, known: Set<string>, file: string | undefined): void {
  const sections = new Set([...known].filter((k) => k.includes('.')).map((k) => k.split('.')[0]));
  for (const [key, value] of Object.entries(yaml)) {
    if (sections.has(key) && isRecord(value)) {
      for (const sub of Object.keys(value)) {
        if (!known.has(`${key}.${sub}`)) throw new ConfigError(`${file}: unknown setting ${key}.${sub}`);
      }
    } else if (!known.has(key)) {
      throw new ConfigError(`${file}: unknown setting ${key}`);
    }
  }
}

function getPath(obj: Record<string, unknown>, path: string[]): unknown {
  let cur: unknown = obj;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = obj;
  for (const p of path.slice(0, -1)) cur = (cur[p] ??= {}) as Record<string, unknown>;
  cur[path[path.length - 1]] = value;
}

/** Paths of secret settings, for pino's redact option. */
export function secretPaths(): string[] {
  return [...walkSettings()].filter(([, s]) => s.secret).map(([p]) => p.join('.'));
}

export { SETTINGS };

/** Every secret value present in a loaded config, for the logger's scrubber. */
export function configSecrets(config: HeraldConfig): string[] {
  const out: string[] = [];
  for (const [path, s] of walkSettings()) {
    if (!s.secret) continue;
    const v = getPath(config as unknown as Record<string, unknown>, path);
    // A list of secrets (HERALD_API_KEYS): each one is scrubbed.
    if (Array.isArray(v)) {
      out.push(...v.filter((k): k is string => typeof k === 'string' && k.length > 0));
      continue;
    }
    if (typeof v !== 'string' || !v) continue;
    // A URL's secret is its password: the rest (host, database) stays readable in logs and error lines.
    // (A password too short to scrub on its own hides the whole URL instead.)
    const password = urlPassword(v);
    out.push(...(!isUrl(v) ? [v] : password.length > 0 || !hasPassword(v) ? password : [v]));
  }
  // Not a secret setting, but its password is one.
  out.push(...urlPassword(config.redisUrl));
  // MCP servers' headers and environment values (tokens, API keys).
  out.push(...serverSecrets(config.mcpServers));
  // Extra bot accounts' tokens (HERALD_BOT_ACCOUNTS is one secret setting, but a list of objects).
  out.push(...accountSecrets(config.botAccounts ?? []));
  // Pool keys from lists, numbered variables and endpoint entries.
  out.push(...Object.values(config.keyPools ?? {}).flat());
  return [...new Set(out)];
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== '';
  } catch {
    return true;
  }
}

function isUrl(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(value);
}

/** The password inside a URL secret (`postgres://user:pw@host/db`), which errors may quote on its own. */
export function urlPassword(value: string): string[] {
  if (!isUrl(value)) return [];
  try {
    const password = decodeURIComponent(new URL(value).password);
    return password.length >= 4 ? [password] : [];
  } catch {
    return [];
  }
}
