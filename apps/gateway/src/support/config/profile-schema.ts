/**
 * The team-control settings' schemas: agent profiles, the routes that pick one per message, per-model prices and
 * spend budgets. In herald.yaml they are mappings and lists; in the environment the same shapes as JSON.
 *
 *   profiles:
 *     support: { model: "openai:gpt-4.1-mini", system_prompt: "You answer support questions.", toolsets: [core],
 *                busy_input_mode: queue, memory: profile, max_concurrent_turns: 4,
 *                review: { enabled: true, every_turns: 5, apply: offer } }
 *   routes:
 *     - { platform: slack, chat: C0SUPPORT, profile: support }
 *     - { platform: telegram, account: sales, profile: sales }
 *   prices:
 *     "gpt-4.1-mini": { input: 0.4, output: 1.6, cache_read: 0.1 }
 *   budgets:
 *     - { scope: user, period: day, usd: 1 }
 *     - { scope: global, period: month, usd: 300, tokens: 50000000 }
 */
import { z } from 'zod';
import { DEFAULT_PROFILE_KEY, PROFILE_NAME, PROFILE_NAME_RULE } from './profile-names.js';

export const TOOLSETS = ['core', 'research', 'schedule', 'code', 'full'] as const;
export const BUSY_MODES = ['interrupt', 'queue', 'steer'] as const;
const MODEL_REF = /^[a-z][a-z0-9_-]*:\S+$/;

const text = z.string().trim().min(1, 'must not be empty');
const modelRef = z.string().trim().regex(MODEL_REF, 'must look like provider:model, e.g. openai:gpt-4.1-mini');
const idList = z
  .union([text, z.number()])
  .transform(String)
  .or(z.array(z.union([text, z.number()]).transform(String)).min(1, 'name at least one id'));

/** Parses JSON from the environment; the YAML file hands objects over as they are. */
function jsonOr<T extends z.ZodType>(schema: T): z.ZodType<z.output<T>, unknown> {
  return z.preprocess((v) => {
    if (typeof v !== 'string') return v;
    try {
      return JSON.parse(v) as unknown;
    } catch {
      return v; // the schema then says what it expected
    }
  }, schema) as unknown as z.ZodType<z.output<T>, unknown>;
}

/** The review after a turn, per profile (HERALD_REVIEW, HERALD_REVIEW_EVERY_TURNS, HERALD_REVIEW_APPLY where unset). */
const reviewSchema = z.strictObject({
  enabled: z.boolean().optional(),
  every_turns: z.number().int('must be a whole number').min(1, 'must be at least 1').max(1_000).optional(),
  apply: z.enum(['auto', 'offer'], 'must be auto or offer').optional(),
});
/** The built-in personalities' names (their texts: features/prompt/personalities.ts); `none` is no personality. */
export const BUILT_IN_PERSONALITIES = ['helpful', 'concise', 'technical', 'teacher', 'creative', 'pirate', 'noir', 'philosopher'] as const;
export type BuiltInPersonality = (typeof BUILT_IN_PERSONALITIES)[number];
/** A personality's name (features/prompt/personalities.ts). */
export const PERSONALITY_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
const PERSONALITY_RULE = 'must be a personality name: lowercase letters, digits, - and _ (at most 32)';

const profileSchema = z.strictObject({
  model: modelRef.optional(),
  fallback_models: z.array(modelRef).optional(),
  system_prompt: text.optional(),
  toolsets: z
    .array(z.enum(TOOLSETS, `must be one of ${TOOLSETS.join(', ')}`))
    .min(1, 'name at least one toolset')
    .optional(),
  busy_input_mode: z.enum(BUSY_MODES, `must be one of ${BUSY_MODES.join(', ')}`).optional(),
  /** profile: notes and session_search are this profile's own; shared: the same as the default profile's. */
  memory: z.enum(['profile', 'shared'], 'must be profile or shared').default('profile'),
  max_iterations: z.number().int('must be a whole number').min(1).max(10_000).optional(),
  /** Turns of this profile running at once across all workers; more wait their turn. */
  max_concurrent_turns: z.number().int('must be a whole number').min(1, 'must be at least 1').max(100_000).optional(),
  review: reviewSchema.optional(),
  /** The identity layer: a personality name (built-in or HERALD_PERSONALITIES); `none` for none. */
  personality: z.string().trim().regex(PERSONALITY_NAME, PERSONALITY_RULE).optional(),
  /** Context files or folders read at session start (instead of HERALD_CONTEXT_FILES). */
  context_files: z.array(text).optional(),
  /** The profile's own skills folder (besides HERALD_SKILLS_DIR). */
  skills_dir: text.optional(),
  /** The skill_manage tool: the agent writes skills of its own. */
  skill_manage: z.boolean().optional(),
  /** Tool names or globs that need approval (features/approvals/policy.ts), and those that never do. */
  approval_tools: z.array(text).optional(),
  approval_exempt: z.array(text).optional(),
});

export const personalitiesSchema = jsonOr(
  z.record(z.string().regex(PERSONALITY_NAME, PERSONALITY_RULE), text.max(8000, 'a personality has at most 8000 characters')),
);

export const profilesSchema = jsonOr(
  z.record(z.string(), profileSchema).superRefine((profiles, ctx) => {
    for (const name of Object.keys(profiles)) {
      if (!PROFILE_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: PROFILE_NAME_RULE });
      if (name === DEFAULT_PROFILE_KEY)
        ctx.addIssue({ code: 'custom', path: [name], message: `"${DEFAULT_PROFILE_KEY}" is reserved (it is the default profile's session-key name)` });
    }
  }),
);
export type ProfilesSetting = z.output<typeof profilesSchema>;

const routeSchema = z.strictObject({
  platform: z.enum(['telegram', 'discord', 'slack', 'whatsapp', 'matrix', 'api'], 'must be telegram, discord, slack, whatsapp, matrix or api').optional(),
  /** A bot account's name (HERALD_BOT_ACCOUNTS); `default` is the one from <PLATFORM>_BOT_TOKEN. */
  account: text.optional(),
  chat_type: z.enum(['dm', 'group', 'thread', 'channel'], 'must be dm, group, thread or channel').optional(),
  /** Chat, channel or group id(s). */
  chat: idList.optional(),
  /** Discord guild or Slack team id(s). */
  space: idList.optional(),
  /** Thread or forum topic id(s). */
  thread: idList.optional(),
  user: idList.optional(),
  profile: z.string().regex(PROFILE_NAME, PROFILE_NAME_RULE),
});
export type Route = z.output<typeof routeSchema>;
export const routesSchema = jsonOr(z.array(routeSchema));

/** USD per million tokens. */
const price = z.number().min(0, 'a price may not be negative').max(100_000, 'a price above $100,000 per million tokens is a typo');
const priceSchema = z.strictObject({
  input: price,
  output: price,
  cache_read: price.optional(),
  cache_write: price.optional(),
  /** USD per minute of audio, for speech-to-text billed by duration (whisper-1). */
  per_minute: price.optional(),
  /** USD per million characters read out, for text-to-speech (tts-1, gpt-4o-mini-tts). */
  per_million_chars: price.optional(),
});
export const pricesSchema = jsonOr(z.record(text, priceSchema));
export type PricesSetting = z.output<typeof pricesSchema>;

const budgetSchema = z
  .strictObject({
    scope: z.enum(['user', 'profile', 'global'], 'must be user, profile or global'),
    period: z.enum(['day', 'month'], 'must be day or month'),
    tokens: z.number().int('must be a whole number').min(1, 'must be at least 1').optional(),
    usd: z.number().positive('must be more than 0').optional(),
    /** Only this profile's turns count (scope user: each user's spend in it; scope profile: that profile). */
    profile: z.string().regex(PROFILE_NAME, PROFILE_NAME_RULE).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.tokens === undefined && b.usd === undefined) ctx.addIssue({ code: 'custom', path: ['usd'], message: 'set usd, tokens or both' });
  });
export type Budget = z.output<typeof budgetSchema>;
export const budgetsSchema = jsonOr(z.array(budgetSchema));
