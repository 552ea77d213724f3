import { z } from 'zod';

/** How long a turn runs before "typing…" shows (HERALD_TYPING_DELAY_MS's default; also a relay platform's, which has no settings). */
export const DEFAULT_TYPING_DELAY_MS = 300;

export interface Setting<T extends z.ZodType = z.ZodType> {
  env: string;
  schema: T;
  /** Raw default (a string or value the schema accepts), or undefined for "unset". */
  fallback?: unknown;
  secret?: boolean;
  doc: string;
}

export const setting = <T extends z.ZodType>(env: string, schema: T, doc: string, fallback?: unknown, secret = false): Setting<T> => ({
  env,
  schema,
  fallback,
  secret,
  doc,
});

// Coercions from the strings the environment gives us (the YAML file may give real booleans / numbers / lists).
export const bool = z
  .union([z.boolean(), z.enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])])
  .transform((v) => (typeof v === 'boolean' ? v : ['true', '1', 'yes', 'on'].includes(v)));
export const int = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^-?\d+$/, 'must be a whole number')])
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
export const ratio = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d*\.?\d+$/, 'must be a number such as 0.5')])
    .transform(Number)
    .pipe(z.number().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`));
export const list = z
  .union([z.array(z.union([z.string(), z.number()])), z.string()])
  .transform((v) => (Array.isArray(v) ? v.map(String) : v.split(',')).map((s) => s.trim()).filter(Boolean));
export const str = z.string().trim().min(1, 'must not be empty');
export const url = z.string().trim().url('must be a URL such as http://host:port/');
export const modelRef = z
  .string()
  .trim()
  .regex(
    /^[a-z][a-z0-9_-]*:\S+$/,
    'must look like provider:model, e.g. openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, openai-responses:o4-mini, bedrock:<model id> or <endpoint>:<model>',
  );
export const modelList = list.pipe(z.array(modelRef));
export const ttsModelRef = z
  .string()
  .trim()
  .regex(/^openai:\S+$/, "must look like openai:<model>, e.g. openai:gpt-4o-mini-tts (voice replies use OpenAI's speech API)");
export const mimePattern = z.string().regex(/^[a-z0-9.+-]+\/([a-z0-9.+-]+|\*)$|^\*\/\*$/i, 'must be MIME types such as image/png or image/*');
export const toolProgressMode = z.enum(['off', 'new', 'all']);
/** on (the platform's own emoji), off, or four emoji for the stages queued,tools,done,error (an empty one is left out). */
export const statusReactions = z
  .string()
  .trim()
  .refine(
    (v) => v === 'on' || v === 'off' || (v.split(',').length === 4 && v.split(',').some((e) => e.trim() !== '')),
    'must be on, off, or four emoji for queued,tools,done,error such as 👀,⚙️,✅,⚠️',
  );
/** `llava=true,gpt-4=false` → { llava: true, 'gpt-4': false }. */
export const visionOverrides = list.pipe(z.array(z.string().regex(/^[^=\s]+=(true|false|yes|no)$/i, 'each entry must be model=true or model=false'))).transform(
  (entries) =>
    Object.fromEntries(
      entries.map((e) => {
        const [model, value] = e.split('=');
        return [model, ['true', 'yes'].includes(value.toLowerCase())];
      }),
    ) as Record<string, boolean>,
);

/** `claude-opus-4-6=32000,gpt-5=16000` → { 'claude-opus-4-6': 32000, 'gpt-5': 16000 }. */
export const maxTokensPerModel = list
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
