/**
 * Every setting Herald reads, in one table: environment name, zod schema, default.
 *
 * The `herald.yaml` key is derived from the environment name, so the two never drift:
 *   HERALD_BUSY_INPUT_MODE   → busy_input_mode            (HERALD_ prefix dropped)
 *   TELEGRAM_REQUIRE_MENTION → telegram.require_mention   (platform / provider / gateway sections)
 *   REDIS_URL                → redis_url
 * Environment values always win over the file.
 */
import { KEY_STRATEGIES, REASONING_EFFORTS, hostTimeZone, isValidTimeZone } from '@herald/agent-core';
import { z } from 'zod';
import { RISK_IDS } from './risks.js';
import { mcpServersSchema } from './mcp.js';
import { endpointList, modelApiModeSchema } from './endpoints.js';
import { PERSONALITY_NAME, budgetsSchema, personalitiesSchema, pricesSchema, profilesSchema, routesSchema } from './profile-schema.js';
import { botAccountsSchema } from './profile-accounts.js';
import { PROFILE_NAME, PROFILE_NAME_RULE } from './profile-names.js';

/** How long a turn runs before "typing…" shows (HERALD_TYPING_DELAY_MS's default; also a relay platform's, which has no settings). */
export const DEFAULT_TYPING_DELAY_MS = 300;

const SECTIONS = ['TELEGRAM', 'DISCORD', 'SLACK', 'WHATSAPP', 'MATRIX', 'OPENAI', 'ANTHROPIC', 'GATEWAY'] as const;

export interface Setting<T extends z.ZodType = z.ZodType> {
  env: string;
  schema: T;
  /** Raw default (a string or value the schema accepts), or undefined for "unset". */
  fallback?: unknown;
  secret?: boolean;
  doc: string;
}

const setting = <T extends z.ZodType>(env: string, schema: T, doc: string, fallback?: unknown, secret = false): Setting<T> => ({
  env,
  schema,
  fallback,
  secret,
  doc,
});

// Coercions from the strings the environment gives us (the YAML file may give real booleans / numbers / lists).
const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])])
  .transform((v) => (typeof v === 'boolean' ? v : ['true', '1', 'yes', 'on'].includes(v)));
const int = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^-?\d+$/, 'must be a whole number')])
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const ratio = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d*\.?\d+$/, 'must be a number such as 0.5')])
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
const list = z
  .union([z.array(z.union([z.string(), z.number()])), z.string()])
  .transform((v) => (Array.isArray(v) ? v.map(String) : v.split(',')).map((s) => s.trim()).filter(Boolean));
const str = z.string().trim().min(1, 'must not be empty');
const url = z.string().trim().url('must be a URL such as http://host:port/');
const modelRef = z
  .string()
  .trim()
  .regex(
    /^[a-z][a-z0-9_-]*:\S+$/,
    'must look like provider:model, e.g. openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, openai-responses:o4-mini, bedrock:<model id> or <endpoint>:<model>',
  );
const modelList = list.pipe(z.array(modelRef));
const ttsModelRef = z
  .string()
  .trim()
  .regex(/^openai:\S+$/, "must look like openai:<model>, e.g. openai:gpt-4o-mini-tts (voice replies use OpenAI's speech API)");
const mimePattern = z.string().regex(/^[a-z0-9.+-]+\/([a-z0-9.+-]+|\*)$|^\*\/\*$/i, 'must be MIME types such as image/png or image/*');
const toolProgressMode = z.enum(['off', 'new', 'all']);
/** on (the platform's own emoji), off, or four emoji for the stages queued,tools,done,error (an empty one is left out). */
const statusReactions = z
  .string()
  .trim()
  .refine(
    (v) => v === 'on' || v === 'off' || (v.split(',').length === 4 && v.split(',').some((e) => e.trim() !== '')),
    'must be on, off, or four emoji for queued,tools,done,error such as 👀,⚙️,✅,⚠️',
  );
/** `llava=true,gpt-4=false` → { llava: true, 'gpt-4': false }. */
const visionOverrides = list.pipe(z.array(z.string().regex(/^[^=\s]+=(true|false|yes|no)$/i, 'each entry must be model=true or model=false'))).transform(
  (entries) =>
    Object.fromEntries(
      entries.map((e) => {
        const [model, value] = e.split('=');
        return [model, ['true', 'yes'].includes(value.toLowerCase())];
      }),
    ) as Record<string, boolean>,
);

/** `claude-opus-4-6=32000,gpt-5=16000` → { 'claude-opus-4-6': 32000, 'gpt-5': 16000 }. */
const maxTokensPerModel = list
  .pipe(z.array(z.string().regex(/^[^=\s]+=[1-9]\d{0,6}$/, 'each entry must be model=tokens, e.g. claude-opus-4-6=32000')))
  .transform(
    (entries) =>
      Object.fromEntries(
        entries.map((e) => {
          const [model, value] = e.split('=');
          return [model, Number(value)];
        }),
      ) as Record<string, number>,
  );

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
  // Side tasks (features/llm/side-tasks.ts): compression summaries, the memory flush, session_search summaries, image descriptions.
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
  // The agent's knowledge: the layers of the system prompt besides HERALD_SYSTEM_PROMPT (docs/prompt.md).
  personality: setting(
    'HERALD_PERSONALITY',
    z.string().trim().regex(PERSONALITY_NAME, 'must be a personality name such as concise (lowercase letters, digits, - and _)'),
    "The default profile's personality (the identity layer of the system prompt): a built-in (helpful, concise, technical, teacher, creative, pirate, noir, philosopher) or one of HERALD_PERSONALITIES; none when unset. /personality switches one conversation",
  ),
  personalities: setting(
    'HERALD_PERSONALITIES',
    personalitiesSchema,
    'Your own personalities: a mapping of name to identity text (JSON in the environment); a name of a built-in replaces it',
    '{}',
  ),
  contextFiles: setting(
    'HERALD_CONTEXT_FILES',
    list,
    "Comma list of the default profile's context files or folders (a folder: its *.md files), e.g. ./AGENTS.md,./context/; read when a session starts",
    '',
  ),
  contextFilesMaxChars: setting(
    'HERALD_CONTEXT_FILES_MAX_CHARS',
    int(100, 1_000_000),
    "Characters of a session's context files together; a file that does not fit is cut, with a warning in the log and in the prompt",
    '20000',
  ),
  skillsDir: setting('HERALD_SKILLS_DIR', str, 'Folder of skills every profile can use: one subfolder per skill with its SKILL.md (Agent Skills format)'),
  skillManage: setting(
    'HERALD_SKILL_MANAGE',
    bool,
    "Give the default profile's agent the skill_manage tool: it may write skills of its own (kept in the store, seen by every worker)",
    'false',
  ),
  skillMaxChars: setting('HERALD_SKILL_MAX_CHARS', int(200, 1_000_000), 'Largest SKILL.md the agent may write with skill_manage (characters)', '20000'),
  ephemeralSystemPrompt: setting(
    'HERALD_EPHEMERAL_SYSTEM_PROMPT',
    str,
    "Added to the system prompt of every model request and never stored with the session (Hermes' ephemeral system prompt); unset: none",
  ),
  // Conversation control (commands, resets, what the user sees while the agent works).
  toolProgress: setting(
    'HERALD_TOOL_PROGRESS',
    toolProgressMode,
    'Tool progress message: off, new (a line when the tool changes) or all; default new (a line per new tool, as Hermes shows)',
  ),
  statusReactions: setting(
    'HERALD_STATUS_REACTIONS',
    statusReactions,
    "Status reactions on the user's message on every platform: on, off, or queued,tools,done,error emoji (default: Slack on, others off)",
  ),
  confirmReset: setting('HERALD_CONFIRM_RESET', bool, '/new (/reset) asks first, with buttons (or /new now); /new now always resets at once', 'false'),
  streaming: setting(
    'HERALD_STREAMING',
    bool,
    'Stream replies as the text arrives (a Telegram draft in private chats, else one message edited in place); <PLATFORM>_STREAMING overrides it per platform',
    'true',
  ),
  typingDelayMs: setting(
    'HERALD_TYPING_DELAY_MS',
    int(0, 60_000),
    'Milliseconds a turn runs before "typing…" shows: a reply that comes sooner is sent without it (0: at once)',
    String(DEFAULT_TYPING_DELAY_MS),
  ),
  interimMessages: setting(
    'HERALD_INTERIM_MESSAGES',
    bool,
    'Show what the model writes before its tool calls ("Let me look that up.") as a message of its own, as Hermes does',
    'true',
  ),
  sessionReset: setting(
    'HERALD_SESSION_RESET',
    z.enum(['idle', 'daily', 'both', 'none']),
    'When a conversation starts afresh by itself: idle, daily, both or none',
    'both',
  ),
  sessionIdleMinutes: setting(
    'HERALD_SESSION_IDLE_MINUTES',
    int(1, 525_600),
    'Idle reset: minutes without activity after which the next message starts a new session',
    '1440',
  ),
  sessionDailyHour: setting('HERALD_SESSION_DAILY_HOUR', int(0, 23), 'Daily reset: local hour (0-23) after which the next message starts a new session', '4'),
  busyInputMode: setting('HERALD_BUSY_INPUT_MODE', z.enum(['interrupt', 'queue', 'steer']), 'What a message does while its session is busy', 'interrupt'),
  workerConcurrency: setting('HERALD_WORKER_CONCURRENCY', int(1, 10_000), 'Turns one worker process runs at once', '50'),
  turnPrepLimit: setting(
    'HERALD_TURN_PREP_LIMIT',
    int(1, 10_000),
    'Turns of one worker preparing their first model request at once: a burst reaches the model in waves, the first soon, not all of it at the end',
    '64',
  ),
  maxIterations: setting('HERALD_MAX_ITERATIONS', int(1, 10_000), 'Agent-loop iteration budget per turn', '90'),
  delegateMaxIterations: setting(
    'HERALD_DELEGATE_MAX_ITERATIONS',
    int(1, 10_000),
    "Iterations one delegate_task subagent may take (within the turn's own budget)",
    '50',
  ),
  delegateMaxPerTurn: setting('HERALD_DELEGATE_MAX_PER_TURN', int(0, 100), 'Subagents (delegate_task) one turn may start', '1'),
  // Media the users send (apps/gateway/src/media): images, voice notes, documents.
  sttModel: setting(
    'HERALD_STT_MODEL',
    modelRef.refine((v) => v.startsWith('openai:'), 'speech-to-text runs on the OpenAI audio API: use openai:<model>, e.g. openai:gpt-4o-mini-transcribe'),
    'Speech-to-text for voice notes and audio, openai:<model> (e.g. openai:gpt-4o-mini-transcribe); unset: voice notes are declined with a reply',
  ),
  visionModel: setting(
    'HERALD_VISION_MODEL',
    modelRef,
    'provider:model that describes images for a main model without vision (Hermes\' "auto" image input); unset: such models decline images with a reply',
  ),
  visionOverrides: setting(
    'HERALD_VISION_OVERRIDES',
    visionOverrides,
    'Comma list of model=true|false: whether a model takes images, over the built-in table (e.g. llava=true,my-model=false)',
    '',
  ),
  mediaMaxFileBytes: setting(
    'HERALD_MEDIA_MAX_FILE_BYTES',
    int(1024, 2_000_000_000),
    "Largest file downloaded from a message (bytes); Telegram's Bot API serves at most 20 MB",
    '20000000',
  ),
  mediaMaxMessageBytes: setting(
    'HERALD_MEDIA_MAX_MESSAGE_BYTES',
    int(1024, 10_000_000_000),
    'All files of one turn together (bytes); files past it are declined with a reply',
    '50000000',
  ),
  mediaMaxImageBytes: setting(
    'HERALD_MEDIA_MAX_IMAGE_BYTES',
    int(1024, 100_000_000),
    'Largest image passed to the model (bytes); Anthropic takes at most 5 MB per image',
    '5000000',
  ),
  mediaMaxImages: setting('HERALD_MEDIA_MAX_IMAGES', int(0, 100), 'Images shown to the model per turn; more are declined with a reply', '10'),
  mediaMaxPages: setting('HERALD_MEDIA_MAX_PAGES', int(1, 10_000), 'PDF pages read per document; the rest is cut with a visible note', '50'),
  mediaMaxChars: setting(
    'HERALD_MEDIA_MAX_CHARS',
    int(100, 10_000_000),
    'Characters of text taken from one document or transcript; the rest is cut with a visible note',
    '40000',
  ),
  // Agent tools (packages/agent-core/src/tools/builtin): which toolsets the model gets, and their limits.
  toolsets: setting(
    'HERALD_TOOLSETS',
    list.pipe(
      z.array(z.enum(['core', 'research', 'schedule', 'code', 'full'], 'must be core, research, schedule, code or full')).min(1, 'name at least one toolset'),
    ),
    'Comma list of toolsets: core (memory, todo, current_time, send_file), research (session_search, web_fetch), schedule (schedule), code (execute_code, when a sandbox backend is found), full (all plus delegate_task, clarify)',
    'core,schedule,code',
  ),
  fetchAllowPrivate: setting('HERALD_FETCH_ALLOW_PRIVATE', bool, 'Let web_fetch reach private, loopback and link-local addresses', 'false'),
  timezone: setting(
    'HERALD_TIMEZONE',
    z.string().trim().refine(isValidTimeZone, 'must be an IANA time zone such as Europe/Berlin'),
    'Time zone of current_time (IANA name)',
    hostTimeZone(),
  ),
  mcpServers: setting(
    'HERALD_MCP_SERVERS',
    mcpServersSchema,
    'MCP tool servers by name: {command, args, env} (stdio) or {url, headers} (Streamable HTTP), each with allow, deny, timeout_ms, profiles; JSON in the environment',
    undefined,
    true,
  ),
  // Team controls (profiles/, budgets/): several agents behind one gateway, routing, spend caps.
  profiles: setting(
    'HERALD_PROFILES',
    profilesSchema,
    'Agent profiles by name: {model, fallback_models, system_prompt, toolsets, busy_input_mode, memory (profile|shared), max_iterations, max_concurrent_turns, personality, context_files, skills_dir, skill_manage, approval_tools, approval_exempt}; JSON in the environment. The top-level settings form the profile "default"',
    '{}',
  ),
  routes: setting(
    'HERALD_ROUTES',
    routesSchema,
    'Which profile answers a message: a list of {platform, account, chat_type, chat, space, thread, user, profile}, first match wins; JSON in the environment',
    '[]',
  ),
  defaultProfile: setting('HERALD_DEFAULT_PROFILE', z.string().regex(PROFILE_NAME, PROFILE_NAME_RULE), 'The profile of a message no route matches', 'default'),
  botAccounts: setting(
    'HERALD_BOT_ACCOUNTS',
    botAccountsSchema,
    'More bot accounts: a list of {platform, name, bot_token, and for Slack app_token (Socket Mode) or signing_secret (Events at POST /slack/events/<name>)}; JSON in the environment; route them with routes[].account',
    '[]',
    true,
  ),
  prices: setting(
    'HERALD_PRICES',
    pricesSchema,
    'USD per million tokens by model name, over the built-in table: {input, output, cache_read, cache_write, per_minute (audio heard, speech-to-text billed by duration), per_million_chars (text read out, text-to-speech)}; JSON in the environment. Used for cost and budgets, image descriptions, transcriptions and voice replies included',
    '{}',
  ),
  budgets: setting(
    'HERALD_BUDGETS',
    budgetsSchema,
    'Spend caps: a list of {scope (user|profile|global), period (day|month), usd, tokens, profile}; JSON in the environment. At 80 % the user is told once, at 100 % turns are refused',
    '[]',
  ),
  adminUsers: setting(
    'HERALD_ADMIN_USERS',
    list,
    'Comma list of platform:user_id (e.g. telegram:42): exempt from budgets (they are still counted), and the people who approve tool calls in groups',
    '',
  ),
  // Approvals (features/approvals/): tool calls that wait for a person's yes.
  approvalTools: setting(
    'HERALD_APPROVAL_TOOLS',
    list,
    'Comma list of tool names or globs (github__create_*) that need approval before they run, besides MCP tools marked destructiveHint and execute_code; a profile may set approval_tools',
    '',
  ),
  approvalExempt: setting(
    'HERALD_APPROVAL_EXEMPT',
    list,
    'Comma list of tool names or globs that never need approval (over the defaults: destructive MCP tools, execute_code); a profile may set approval_exempt',
    '',
  ),
  approvalTimeoutS: setting('HERALD_APPROVAL_TIMEOUT_S', int(5, 86_400), 'Seconds a tool call waits for approval; then it is denied', '300'),
  llmConcurrency: setting('HERALD_LLM_CONCURRENCY', int(0, 100_000), 'LLM requests running at once across all workers (0 = no cap); more wait their turn', '0'),
  // Scheduled tasks (schedules/): the schedule tool, /schedules and the admin API.
  scheduleSession: setting(
    'HERALD_SCHEDULE_SESSION',
    z.enum(['own', 'origin']),
    "Where a scheduled task's turn runs: own (a session of the task's own) or origin (the chat's conversation); a task may say otherwise",
    'own',
  ),
  schedulesPerUser: setting(
    'HERALD_SCHEDULES_PER_USER',
    int(0, 10_000),
    'Active scheduled tasks one user may have (0: the agent cannot set any; existing ones still run)',
    '25',
  ),
  turnWatchdogS: setting('HERALD_TURN_WATCHDOG_S', int(5, 86_400), 'A turn with no agent activity for this long is aborted and its session unlocked', '1800'),
  drainTimeoutMs: setting(
    'HERALD_DRAIN_TIMEOUT_MS',
    int(0, 3_600_000),
    'On SIGTERM, how long running turns may finish before they are handed back to the queue',
    '7000',
  ),
  // Operator safety (ops/safety/): settings that can lose data are warned about at start-up, in doctor and /health/detailed.
  acceptRisks: setting(
    'HERALD_ACCEPT_RISKS',
    list.pipe(z.array(z.enum(RISK_IDS, `must be one of ${RISK_IDS.join(', ')}`))),
    `Comma list of known, accepted risks to stop warning about (${RISK_IDS.join(', ')})`,
    '',
  ),
  storeMinFreeMb: setting(
    'HERALD_STORE_MIN_FREE_MB',
    int(0, 100_000_000),
    "Warn when the SQLite store's disk has less free space than this many MB (or than the store's own size)",
    '1024',
  ),
  // Advanced: how fast a killed worker's sessions and jobs are taken over (queue/leases.ts; docs/architecture.md,
  // "Taking over from a dead worker"). Lower = faster recovery, more Redis traffic, takeovers after shorter pauses.
  sessionLockMs: setting(
    'HERALD_SESSION_LOCK_MS',
    int(300, 600_000),
    "Session lock lease, renewed every third of it; a dead worker's sessions are free again after this",
    '4000',
  ),
  jobLockMs: setting(
    'HERALD_JOB_LOCK_MS',
    int(300, 600_000),
    "BullMQ job lock, renewed every half of it; a dead worker's jobs are recovered at most this plus the stalled interval after it died",
    '3000',
  ),
  stalledIntervalMs: setting('HERALD_STALLED_INTERVAL_MS', int(300, 600_000), "How often workers look for jobs whose lock ran out (a dead worker's)", '1500'),
  janitorIntervalMs: setting(
    'HERALD_JANITOR_INTERVAL_MS',
    int(100, 600_000),
    'How often a worker looks for messages left without a queue job (an ingress killed mid-hand-over)',
    '30000',
  ),
  userRateLimit: setting('HERALD_USER_RATE_LIMIT', int(0, 100_000), 'Messages per minute one user may send (0 = no limit); commands are never limited', '20'),
  // Outbound files and voice replies (outbound/): what the agent may send to the chat.
  outboundFileMaxMb: setting(
    'HERALD_OUTBOUND_FILE_MAX_MB',
    int(1, 2000),
    'Largest file the agent may send to the chat (send_file, pictures in replies, voice replies), in MB',
    '20',
  ),
  outboundFileTypes: setting(
    'HERALD_OUTBOUND_FILE_TYPES',
    list.pipe(z.array(mimePattern).min(1, 'name at least one type')),
    'Comma list of MIME types the agent may send, exact or family/*',
    'image/*,audio/*,video/*,text/*,application/pdf,application/json,application/zip',
  ),
  outboundFilesPerTurn: setting('HERALD_OUTBOUND_FILES_PER_TURN', int(0, 50), 'Files one reply may carry (0: the agent sends no files)', '10'),
  replyImages: setting('HERALD_REPLY_IMAGES', bool, 'Pictures a reply shows as Markdown images (![alt](https://…)) are fetched and sent as pictures', 'true'),
  ttsModel: setting(
    'HERALD_TTS_MODEL',
    ttsModelRef,
    'Text-to-speech model for voice replies (/voice on), e.g. openai:gpt-4o-mini-tts; unset: no voice replies',
  ),
  ttsVoice: setting(
    'HERALD_TTS_VOICE',
    z
      .string()
      .trim()
      .regex(/^[\w-]{1,64}$/, 'must be a voice name such as alloy or coral'),
    'Voice of the voice replies',
    'alloy',
  ),
  // Code execution (features/sandbox/, docs/sandbox.md): the execute_code tool's backend and limits.
  sandboxBackend: setting(
    'HERALD_SANDBOX_BACKEND',
    z.enum(['auto', 'bubblewrap', 'docker', 'off']),
    'Where execute_code runs code: auto (bubblewrap, else Docker), bubblewrap, docker or off; with none usable the tool is not offered',
    'auto',
  ),
  sandboxDir: setting('HERALD_SANDBOX_DIR', str, 'Folder of the per-conversation work dirs of execute_code', './data/sandbox'),
  sandboxImage: setting('HERALD_SANDBOX_IMAGE', str, 'Image of the Docker backend (JavaScript needs one with node)', 'python:3.12-slim'),
  sandboxTimeoutS: setting(
    'HERALD_SANDBOX_TIMEOUT_S',
    int(1, 3600),
    'Wall time of one execute_code run in seconds; past it every process of the run is killed',
    '60',
  ),
  sandboxCpuS: setting('HERALD_SANDBOX_CPU_S', int(1, 3600), 'CPU seconds of each process of a run', '30'),
  sandboxMemoryMb: setting(
    'HERALD_SANDBOX_MEMORY_MB',
    int(64, 1_048_576),
    'Memory of a run in MB (bubblewrap: address space of each process; Docker: the whole container); Node.js needs about 1024',
    '1024',
  ),
  sandboxProcesses: setting('HERALD_SANDBOX_PROCESSES', int(1, 100_000), 'Processes and threads a run may have at once', '64'),
  sandboxDiskMb: setting(
    'HERALD_SANDBOX_DISK_MB',
    int(1, 1_048_576),
    'Size of the work dir of a run in MB (a tmpfs, in memory; /tmp and /dev/shm get the same)',
    '100',
  ),
  sandboxOutputKb: setting(
    'HERALD_SANDBOX_OUTPUT_KB',
    int(1, 102_400),
    'stdout and stderr a run may write, in KB each; past it the run is stopped and the output cut',
    '64',
  ),
  sandboxNetwork: setting(
    'HERALD_SANDBOX_NETWORK',
    bool,
    "Give execute_code the host's network (it can then reach Redis, the database and anything the gateway can: read docs/sandbox.md first)",
    'false',
  ),
  // Retention (features/sessions/retention.ts): what the store forgets. Messages (the transcripts) are kept.
  turnRetentionDays: setting(
    'HERALD_TURN_RETENTION_DAYS',
    int(0, 36_500),
    "Days a finished turn's delivery record is kept (0 = forever); messages are kept",
    '30',
  ),
  threadRetentionDays: setting(
    'HERALD_THREAD_RETENTION_DAYS',
    int(0, 36_500),
    'Days a thread the bot took part in is remembered after its last message (0 = forever); afterwards it needs a mention there again',
    '90',
  ),

  openai: {
    apiKey: setting('OPENAI_API_KEY', str, 'OpenAI (or compatible server) API key; more keys: OPENAI_API_KEY_2, OPENAI_API_KEY_3, …', undefined, true),
    apiKeys: setting('OPENAI_API_KEYS', list, 'More OpenAI keys for the pool, comma list (herald.yaml: openai.api_keys)', '', true),
    baseUrl: setting('OPENAI_BASE_URL', url, 'OpenAI-compatible base URL (Ollama, vLLM, llama.cpp, OpenRouter)'),
  },
  anthropic: {
    apiKey: setting('ANTHROPIC_API_KEY', str, 'Anthropic API key; more keys: ANTHROPIC_API_KEY_2, …', undefined, true),
    apiKeys: setting('ANTHROPIC_API_KEYS', list, 'More Anthropic keys for the pool, comma list (herald.yaml: anthropic.api_keys)', '', true),
    baseUrl: setting('ANTHROPIC_BASE_URL', url, 'Anthropic API base URL'),
  },
  telegram: {
    botToken: setting(
      'TELEGRAM_BOT_TOKEN',
      z.string().regex(/^\d+:[\w-]+$/, 'must look like 123456:ABC-DEF… (from @BotFather)'),
      'Telegram bot token',
      undefined,
      true,
    ),
    apiRoot: setting('TELEGRAM_API_ROOT', url, 'Bot API root (a local Bot API server)', 'https://api.telegram.org'),
    webhookUrl: setting('TELEGRAM_WEBHOOK_URL', url, 'Public URL for webhook mode (instead of long polling)'),
    webhookSecret: setting(
      'TELEGRAM_WEBHOOK_SECRET',
      z.string().regex(/^[\w-]{1,256}$/, '1-256 characters A-Z a-z 0-9 _ -'),
      'Secret Telegram sends in X-Telegram-Bot-Api-Secret-Token',
      undefined,
      true,
    ),
    requireMention: setting('TELEGRAM_REQUIRE_MENTION', bool, 'In groups, only answer mentions, replies and commands', 'true'),
    allowedUsers: setting('TELEGRAM_ALLOWED_USERS', list, 'Telegram user ids allowed to talk to the bot', ''),
    allowAllUsers: setting('TELEGRAM_ALLOW_ALL_USERS', bool, 'Let any Telegram user in', 'false'),
    toolProgress: setting('TELEGRAM_TOOL_PROGRESS', toolProgressMode, 'Tool progress on Telegram (overrides HERALD_TOOL_PROGRESS; default new)'),
    streaming: setting('TELEGRAM_STREAMING', bool, 'Streamed replies on Telegram (overrides HERALD_STREAMING; default on)'),
    statusReactions: setting('TELEGRAM_STATUS_REACTIONS', statusReactions, 'Status reactions on Telegram (overrides HERALD_STATUS_REACTIONS)'),
  },
  discord: {
    botToken: setting('DISCORD_BOT_TOKEN', str, 'Discord bot token', undefined, true),
    apiUrl: setting('DISCORD_API_URL', url, 'Discord REST base', 'https://discord.com/api'),
    requireMention: setting('DISCORD_REQUIRE_MENTION', bool, 'In servers, only answer mentions (and threads the bot is in)', 'true'),
    autoThread: setting('DISCORD_AUTO_THREAD', bool, 'Open a thread for a top-level mention', 'true'),
    freeResponseChannels: setting('DISCORD_FREE_RESPONSE_CHANNELS', list, 'Channel ids where every message is answered', ''),
    allowBots: setting('DISCORD_ALLOW_BOTS', z.enum(['none', 'mentions', 'all']), 'Messages from other bots', 'none'),
    allowedUsers: setting('DISCORD_ALLOWED_USERS', list, 'Discord user ids allowed', ''),
    allowAllUsers: setting('DISCORD_ALLOW_ALL_USERS', bool, 'Let any Discord user in', 'false'),
    toolProgress: setting('DISCORD_TOOL_PROGRESS', toolProgressMode, 'Tool progress on Discord (overrides HERALD_TOOL_PROGRESS; default new)'),
    streaming: setting('DISCORD_STREAMING', bool, 'Streamed replies on Discord (overrides HERALD_STREAMING; default on)'),
    statusReactions: setting('DISCORD_STATUS_REACTIONS', statusReactions, 'Status reactions on Discord (overrides HERALD_STATUS_REACTIONS)'),
    slashCommands: setting('DISCORD_SLASH_COMMANDS', bool, "Register Herald's commands as Discord application (slash) commands", 'true'),
    commandGuilds: setting(
      'DISCORD_COMMAND_GUILDS',
      list.pipe(z.array(z.string().regex(/^\d{1,20}$/, 'must be server (guild) ids'))),
      'Comma list of server ids to register the slash commands in (instant); empty: global',
      '',
    ),
  },
  slack: {
    botToken: setting('SLACK_BOT_TOKEN', z.string().regex(/^xoxb-/, 'must start with xoxb-'), 'Slack bot token', undefined, true),
    appToken: setting('SLACK_APP_TOKEN', z.string().regex(/^xapp-/, 'must start with xapp-'), 'App-level token: Socket Mode', undefined, true),
    signingSecret: setting('SLACK_SIGNING_SECRET', str, 'Signing secret: Events over HTTP at POST /slack/events', undefined, true),
    apiUrl: setting('SLACK_API_URL', url, 'Slack Web API base', 'https://slack.com/api/'),
    allowedUsers: setting('SLACK_ALLOWED_USERS', list, 'Slack user ids allowed', ''),
    allowAllUsers: setting('SLACK_ALLOW_ALL_USERS', bool, 'Let any Slack user in', 'false'),
    toolProgress: setting('SLACK_TOOL_PROGRESS', toolProgressMode, 'Tool progress on Slack (overrides HERALD_TOOL_PROGRESS; default new)'),
    streaming: setting('SLACK_STREAMING', bool, 'Streamed replies on Slack (overrides HERALD_STREAMING; default on)'),
    slashCommands: setting(
      'SLACK_SLASH_COMMANDS',
      z.enum(['single', 'each']),
      'single: one /herald <command>; each: also /herald-<command> per command (declare them in the app)',
      'single',
    ),
    statusReactions: setting('SLACK_STATUS_REACTIONS', statusReactions, 'Status reactions on Slack (overrides HERALD_STATUS_REACTIONS)'),
  },
  whatsapp: {
    accessToken: setting('WHATSAPP_ACCESS_TOKEN', str, "WhatsApp Cloud API access token (a system user's permanent token)", undefined, true),
    phoneNumberId: setting(
      'WHATSAPP_PHONE_NUMBER_ID',
      z.string().regex(/^\d{1,32}$/, "must be the phone number ID (digits) from the app's WhatsApp API Setup"),
      'WhatsApp business phone number ID',
    ),
    appSecret: setting('WHATSAPP_APP_SECRET', str, 'Meta app secret: checks X-Hub-Signature-256 on POST /whatsapp/webhook', undefined, true),
    verifyToken: setting(
      'WHATSAPP_VERIFY_TOKEN',
      str,
      "The webhook's Verify Token (any string you choose; typed into the app's webhook settings too)",
      undefined,
      true,
    ),
    apiUrl: setting('WHATSAPP_API_URL', url, 'Graph API base, with its version', 'https://graph.facebook.com/v22.0'),
    windowTemplate: setting(
      'WHATSAPP_WINDOW_TEMPLATE',
      z.string().regex(/^[a-z0-9_]{1,512}:[A-Za-z_]{2,8}$/, 'must be <template name>:<language code>, e.g. herald_follow_up:en_US'),
      'Approved template sent when the 24-hour window is closed (<name>:<language>); unset: such replies are refused and logged',
    ),
    allowedUsers: setting('WHATSAPP_ALLOWED_USERS', list, 'WhatsApp ids (phone numbers, digits only) allowed', ''),
    allowAllUsers: setting('WHATSAPP_ALLOW_ALL_USERS', bool, 'Let any WhatsApp user in', 'false'),
    toolProgress: setting('WHATSAPP_TOOL_PROGRESS', toolProgressMode, 'Tool progress on WhatsApp (overrides HERALD_TOOL_PROGRESS; default off)'),
    statusReactions: setting('WHATSAPP_STATUS_REACTIONS', statusReactions, 'Status reactions on WhatsApp (overrides HERALD_STATUS_REACTIONS)'),
  },
  matrix: {
    homeserverUrl: setting('MATRIX_HOMESERVER_URL', url, "The bot account's homeserver (client-server API base), e.g. https://matrix.example.org"),
    accessToken: setting('MATRIX_ACCESS_TOKEN', str, "The bot account's access token (docs/platforms/matrix.md: how to get one)", undefined, true),
    userId: setting(
      'MATRIX_USER_ID',
      z.string().regex(/^@[^:\s]+:[A-Za-z0-9.\-[\]:]+$/, 'must be a Matrix user id such as @herald:example.org'),
      "The bot account's user id",
    ),
    allowedUsers: setting('MATRIX_ALLOWED_USERS', list, 'Matrix user ids (@name:server) allowed', ''),
    allowAllUsers: setting('MATRIX_ALLOW_ALL_USERS', bool, 'Let any Matrix user in', 'false'),
    allowedRooms: setting('MATRIX_ALLOWED_ROOMS', list, 'Room ids (!id:server) the bot answers in besides one-to-one rooms; empty: every room it is in', ''),
    inviteFrom: setting(
      'MATRIX_INVITE_FROM',
      list,
      "Users whose invites the bot accepts (* anyone); empty: MATRIX_ALLOWED_USERS's users; others are declined and logged",
      '',
    ),
    toolProgress: setting('MATRIX_TOOL_PROGRESS', toolProgressMode, 'Tool progress on Matrix (overrides HERALD_TOOL_PROGRESS; default new)'),
    streaming: setting('MATRIX_STREAMING', bool, 'Streamed replies on Matrix, as edits (overrides HERALD_STREAMING; default on)'),
    statusReactions: setting('MATRIX_STATUS_REACTIONS', statusReactions, 'Status reactions on Matrix (overrides HERALD_STATUS_REACTIONS)'),
  },
  gateway: {
    allowedUsers: setting('GATEWAY_ALLOWED_USERS', list, 'User ids allowed on every platform', ''),
    allowAllUsers: setting('GATEWAY_ALLOW_ALL_USERS', bool, 'Let anyone in on every platform', 'false'),
  },
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
