/** The settings table's rows for the agent's features (settings.ts spreads them in place): knowledge, conversation control, media, tools, teams, approvals, schedules, safety, take-over, outbound files, code execution, retention. */
import { hostTimeZone, isValidTimeZone } from '@herald/agent-core';
import { z } from 'zod';
import { RISK_IDS } from './risks.js';
import { mcpServersSchema } from './mcp.js';
import { PERSONALITY_NAME, budgetsSchema, personalitiesSchema, pricesSchema, profilesSchema, routesSchema } from './profile-schema.js';
import { botAccountsSchema } from './profile-accounts.js';
import { PROFILE_NAME, PROFILE_NAME_RULE } from './profile-names.js';
import {
  DEFAULT_TYPING_DELAY_MS,
  bool,
  int,
  list,
  mimePattern,
  modelRef,
  setting,
  statusReactions,
  str,
  toolProgressMode,
  ttsModelRef,
  visionOverrides,
} from './settings-kinds.js';

export const FEATURE_SETTINGS = {
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
} as const;
