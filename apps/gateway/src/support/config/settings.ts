/**
 * Every setting Herald reads, in one table: environment name, zod schema, default. The table is written in three
 * files, spread here in this order: the service's rows (below), the features' rows (settings-features.ts) and the
 * providers', platforms' and gateway-wide sections (settings-sections.ts); a row's pieces are in settings-kinds.ts.
 *
 * The `herald.yaml` key is derived from the environment name, so the two never drift:
 *   HERALD_BUSY_INPUT_MODE   → busy_input_mode            (HERALD_ prefix dropped)
 *   TELEGRAM_REQUIRE_MENTION → telegram.require_mention   (platform / provider / gateway sections)
 *   REDIS_URL                → redis_url
 * Environment values always win over the file.
 */
import { KEY_STRATEGIES, REASONING_EFFORTS } from '@herald/agent-core';
import { z } from 'zod';
import { endpointList, modelApiModeSchema } from './endpoints.js';
import { bool, int, list, maxTokensPerModel, modelList, modelRef, ratio, setting, str, url, type Setting } from './settings-kinds.js';
import { FEATURE_SETTINGS } from './settings-features.js';
import { SECTION_SETTINGS } from './settings-sections.js';

export { DEFAULT_TYPING_DELAY_MS } from './settings-kinds.js';
export type { Setting } from './settings-kinds.js';

const SECTIONS = ['TELEGRAM', 'DISCORD', 'SLACK', 'WHATSAPP', 'MATRIX', 'OPENAI', 'ANTHROPIC', 'GATEWAY'] as const;

export const SETTINGS = {
  redisUrl: setting('REDIS_URL', url, 'Redis for BullMQ and pub/sub', 'redis://127.0.0.1:6379'),
  redisSentinels: setting(
    'REDIS_SENTINELS',
    list.pipe(z.array(z.string().regex(/^[^\s:,]+:\d{1,5}$/, 'each entry must be host:port, e.g. 10.0.0.5:26379'))),
    'Sentinels to ask for the current primary (host:port list); REDIS_URL then gives only the password, database and TLS',
  ),
  redisSentinelName: setting('REDIS_SENTINEL_NAME', str, 'The primary group the Sentinels watch (sentinel monitor <name> …)', 'mymaster'),
  redisSentinelPassword: setting('REDIS_SENTINEL_PASSWORD', str, "The Sentinels' own password (requirepass in sentinel.conf)", undefined, true),
  redisSentinelTls: setting('REDIS_SENTINEL_TLS', bool, 'TLS to the Sentinels too (the primary gets TLS from a rediss:// REDIS_URL)', 'false'),
  redisWaitReplicas: setting(
    'HERALD_REDIS_WAIT_REPLICAS',
    int(0, 16),
    'Replicas a mailbox append must reach (Redis WAIT) before a message is acknowledged to its platform; 0 = no WAIT',
    '0',
  ),
  redisWaitTimeoutMs: setting(
    'HERALD_REDIS_WAIT_TIMEOUT_MS',
    int(10, 60_000),
    'How long one WAIT may take; past it the message is not acknowledged and is tried again; at most 2000 with Slack configured',
    '1000',
  ),
  redisPrefix: setting(
    'HERALD_REDIS_PREFIX',
    z.string().regex(/^[\w.-]+$/, 'letters, digits, . _ - only'),
    'Prefix of every Redis key Herald writes',
    'herald',
  ),
  db: setting('HERALD_DB', str, 'SQLite file', './data/herald.db'),
  databaseUrl: setting(
    'HERALD_DATABASE_URL',
    z
      .string()
      .trim()
      .regex(/^postgres(ql)?:\/\/\S+$/i, 'must be a PostgreSQL URL such as postgres://user:password@host:5432/herald'),
    'PostgreSQL store instead of the SQLite file (postgres://user:password@host:5432/db)',
    undefined,
    true,
  ),
  databasePoolSize: setting('HERALD_DATABASE_POOL_SIZE', int(1, 500), 'PostgreSQL connections per process', '10'),
  host: setting('HERALD_HOST', str, 'Admin HTTP listen address', '127.0.0.1'),
  port: setting('HERALD_PORT', int(0, 65535), 'Admin HTTP port (0 = any free port)', '8080'),
  adminToken: setting(
    'HERALD_ADMIN_TOKEN',
    z.string().min(16, 'must be at least 16 characters'),
    'Bearer token for /admin/*; unset disables the admin API',
    undefined,
    true,
  ),
  // The OpenAI-compatible HTTP API (apps/gateway/src/api): on while at least one key is set.
  apiKeys: setting(
    'HERALD_API_KEYS',
    list.pipe(
      z.array(
        z
          .string()
          .min(16, 'each key must be at least 16 characters')
          .regex(/^[\x21-\x7e]+$/, 'keys are printable ASCII without spaces'),
      ),
    ),
    'Comma list of bearer keys for the OpenAI-compatible API (/v1/*); unset disables it',
    '',
    true,
  ),
  apiRateLimit: setting('HERALD_API_RATE_LIMIT', int(0, 100_000), 'Requests per minute one API key may make to /v1 (0 = no limit)', '60'),
  logLevel: setting('HERALD_LOG_LEVEL', z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'Log level', 'info'),
  sessionLogDir: setting(
    'HERALD_SESSION_LOG_DIR',
    str,
    "Directory for per-conversation log files: each line about a conversation also goes to <dir>/<session key>.log; unset: the process's output only",
  ),
  model: setting('HERALD_MODEL', modelRef, 'provider:model the agent uses'),
  fallbackModels: setting('HERALD_FALLBACK_MODELS', modelList, 'Comma list of provider:model tried in order', ''),
  // Side tasks (features/sessions/models.ts SideTaskModels): compression summaries, the memory flush, session_search summaries, image descriptions.
  auxiliaryModel: setting(
    'HERALD_AUXILIARY_MODEL',
    modelRef,
    "provider:model for side tasks (compression and session_search summaries, the memory flush, image descriptions); unset: the conversation's own model",
  ),
  autoTitle: setting(
    'HERALD_AUTO_TITLE',
    bool,
    'Name each new conversation after its first exchange with the side-task model; unset: on when HERALD_AUXILIARY_MODEL is set',
  ),
  // The review after a turn (features/llm/post-turn-review.ts); a profile's `review` overrides each.
  review: setting(
    'HERALD_REVIEW',
    bool,
    'After every N turns, the side-task model reviews them behind the reply and proposes memory notes and skill edits',
    'false',
  ),
  reviewEveryTurns: setting('HERALD_REVIEW_EVERY_TURNS', int(1, 1_000), 'How many turns of a conversation between two reviews', '5'),
  reviewApply: setting(
    'HERALD_REVIEW_APPLY',
    z.enum(['auto', 'offer']),
    "auto: the review's memory notes are saved at once; offer: they are offered to the user with buttons (or /remember)",
    'offer',
  ),
  auxiliaryFallbackModels: setting(
    'HERALD_AUXILIARY_FALLBACK_MODELS',
    modelList,
    "Comma list of provider:model a side task tries after HERALD_AUXILIARY_MODEL fails (a 402, an outage), before the conversation's own models",
    '',
  ),
  // One chain per side task (I14): its own model and fallbacks, tried before the shared auxiliary chain above.
  compressionModel: setting(
    'HERALD_COMPRESSION_MODEL',
    modelRef,
    'provider:model for compression summaries and the memory flush; unset: the side-task chain (HERALD_AUXILIARY_MODEL, then the conversation model)',
  ),
  compressionFallbackModels: setting(
    'HERALD_COMPRESSION_FALLBACK_MODELS',
    modelList,
    'Comma list of provider:model tried after HERALD_COMPRESSION_MODEL fails, before the side-task chain',
    '',
  ),
  titleModel: setting('HERALD_TITLE_MODEL', modelRef, 'provider:model that names new conversations; unset: the side-task chain'),
  titleFallbackModels: setting(
    'HERALD_TITLE_FALLBACK_MODELS',
    modelList,
    'Comma list of provider:model tried after HERALD_TITLE_MODEL fails, before the side-task chain',
    '',
  ),
  searchModel: setting('HERALD_SEARCH_MODEL', modelRef, 'provider:model that writes session_search summaries; unset: the side-task chain'),
  searchFallbackModels: setting(
    'HERALD_SEARCH_FALLBACK_MODELS',
    modelList,
    'Comma list of provider:model tried after HERALD_SEARCH_MODEL fails, before the side-task chain',
    '',
  ),
  visionFallbackModels: setting(
    'HERALD_VISION_FALLBACK_MODELS',
    modelList,
    'Comma list of provider:model (told they see images) tried after HERALD_VISION_MODEL fails, before vision-capable auxiliary models',
    '',
  ),
  // Providers (support/config/providers.ts): named endpoints, API modes, key pools, stream health.
  endpoints: setting(
    'HERALD_ENDPOINTS',
    endpointList,
    'Named OpenAI-compatible endpoints: a list of {name, base_url, api_keys?, api_mode?, cache_markers?} (JSON in the environment); refer to one as <name>:<model>',
    '[]',
  ),
  modelApiModes: setting(
    'HERALD_MODEL_API_MODES',
    list.pipe(z.array(modelApiModeSchema)),
    'Comma list of provider:model=mode, the wire API of one model (chat_completions, responses, anthropic_messages, bedrock_converse)',
    '',
  ),
  keyStrategy: setting(
    'HERALD_KEY_STRATEGY',
    z.enum(KEY_STRATEGIES as unknown as ['fill_first', 'round_robin', 'least_used']),
    'Which key of a pool a request takes: fill_first, round_robin or least_used',
    'fill_first',
  ),
  keyRateLimitCooldownS: setting(
    'HERALD_KEY_RATE_LIMIT_COOLDOWN_S',
    int(1, 86_400),
    'Seconds a pooled key rests after a 429 that one more try did not clear (a longer Retry-After wins)',
    '60',
  ),
  keyCooldownS: setting('HERALD_KEY_COOLDOWN_S', int(1, 604_800), 'Seconds a pooled key rests after a 401 or 403', '600'),
  keyBillingCooldownS: setting('HERALD_KEY_BILLING_COOLDOWN_S', int(1, 2_592_000), 'Seconds a pooled key rests after a 402 or an exhausted quota', '86400'),
  streamStallTimeoutMs: setting(
    'HERALD_STREAM_STALL_TIMEOUT_MS',
    int(100, 3_600_000),
    'A model stream silent this long has stalled: it is cut, its HTTP client rebuilt, and the call retried',
    '90000',
  ),
  maxTokens: setting(
    'HERALD_MAX_TOKENS',
    maxTokensPerModel,
    'Comma list of model=tokens: the max_tokens (output limit) of each call to that model, e.g. claude-opus-4-6=32000 (a family name covers its snapshots); the API default otherwise (Anthropic: 16384)',
    '',
  ),
  reasoningEffort: setting(
    'HERALD_REASONING_EFFORT',
    z.enum(REASONING_EFFORTS as unknown as ['none', 'minimal', 'low', 'medium', 'high', 'xhigh']),
    'Reasoning effort, none|minimal|low|medium|high|xhigh: OpenAI reasoning models (o-series, GPT-5) and compatible servers; for Claude (Anthropic, Bedrock) a thinking budget of 1024/4000/8000/16000/32000 tokens unless HERALD_THINKING_BUDGET is set; the model default when unset',
  ),
  thinkingBudget: setting(
    'HERALD_THINKING_BUDGET',
    int(1024, 1_000_000),
    'Claude extended thinking (Anthropic, Bedrock): budget_tokens of each call (at least 1024); from HERALD_REASONING_EFFORT when unset, else off. Thinking blocks are kept and sent back across tool turns',
  ),
  compressionThreshold: setting(
    'HERALD_COMPRESSION_THRESHOLD',
    ratio(0.1, 0.8),
    'Share of the context window at which the agent loop compresses the conversation inside a turn (0.1-0.8)',
    '0.5',
  ),
  contextWindow: setting('HERALD_CONTEXT_WINDOW', int(1024, 100_000_000), "Override the model's context window (tokens)"),
  systemPrompt: setting(
    'HERALD_SYSTEM_PROMPT',
    str,
    'System prompt of the agent',
    'You are Herald, a helpful assistant reachable from chat apps. Answer concisely.',
  ),
  ...FEATURE_SETTINGS,
  ...SECTION_SETTINGS,
} as const;

type SettingTree = { [key: string]: Setting | SettingTree };
type Resolve<T> = T extends Setting<infer S> ? z.output<S> | (T extends { fallback: undefined } ? undefined : never) : { [K in keyof T]: Resolve<T[K]> };

/** The typed configuration: each optional setting without a default may be undefined. */
export type SettingsValues = { [K in keyof typeof SETTINGS]: Resolve<(typeof SETTINGS)[K]> };

/** `HERALD_BUSY_INPUT_MODE` → ['busy_input_mode'], `TELEGRAM_REQUIRE_MENTION` → ['telegram', 'require_mention']. */
export function yamlPath(env: string): string[] {
  const section = SECTIONS.find((s) => env.startsWith(`${s}_`));
  if (section) return [section.toLowerCase(), env.slice(section.length + 1).toLowerCase()];
  return [env.replace(/^HERALD_/, '').toLowerCase()];
}

function isSetting(v: Setting | SettingTree): v is Setting {
  return typeof (v as Setting).env === 'string' && (v as Setting).schema instanceof z.ZodType;
}

export function* walkSettings(tree: SettingTree = SETTINGS as unknown as SettingTree, path: string[] = []): Generator<[string[], Setting]> {
  for (const [key, value] of Object.entries(tree)) {
    if (isSetting(value)) yield [[...path, key], value];
    else yield* walkSettings(value, [...path, key]);
  }
}
