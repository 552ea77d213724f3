/**
 * The provider settings that do not fit one row of the settings table: named OpenAI-compatible endpoints
 * (HERALD_ENDPOINTS / `endpoints:` in herald.yaml), per-model API modes (HERALD_MODEL_API_MODES) and the key
 * pools gathered from `<NAME>_API_KEY`, `<NAME>_API_KEY_2`, … and `<NAME>_API_KEYS` / `api_keys` lists.
 */
import { API_MODES, BUILTIN_PROVIDERS, type ApiMode } from '@herald/agent-core';
import { z } from 'zod';

const NAME = /^[a-z][a-z0-9_-]*$/;

const endpointSchema = z
  .object({
    name: z
      .string()
      .regex(NAME, 'an endpoint name is lower-case letters, digits, - and _ (it becomes the model prefix)')
      .refine((n) => !(BUILTIN_PROVIDERS as readonly string[]).includes(n), 'an endpoint may not take a built-in provider name'),
    base_url: z.string().trim().url('base_url must be a URL such as https://openrouter.ai/api/v1'),
    api_keys: z.array(z.string().trim().min(1)).optional(),
    api_mode: z.enum(API_MODES as [ApiMode, ...ApiMode[]]).optional(),
    cache_markers: z.boolean().optional(),
  })
  .strict();

export type EndpointConfig = z.output<typeof endpointSchema>;

/** A YAML list of endpoints, or the same as a JSON string in the environment. */
export const endpointList = z
  .union([z.array(z.unknown()), z.string()])
  .transform((value, ctx) => {
    if (Array.isArray(value)) return value;
    try {
      const v: unknown = JSON.parse(value);
      return Array.isArray(v) ? v : [v];
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON list of endpoints, e.g. [{"name":"openrouter","base_url":"https://openrouter.ai/api/v1"}]' });
      return z.NEVER;
    }
  })
  .pipe(z.array(endpointSchema))
  .refine((list) => new Set(list.map((e) => e.name)).size === list.length, 'endpoint names must be unique');

/** `openai:gpt-5=responses` → the model's API mode. */
export const modelApiModeSchema = z
  .string()
  .trim()
  .regex(new RegExp(`^[a-z][a-z0-9_-]*:\\S+=(${API_MODES.join('|')})$`), `must look like provider:model=mode (modes: ${API_MODES.join(', ')})`);

export function apiModeFor(entries: readonly string[], ref: string): ApiMode | undefined {
  for (const entry of entries) {
    const at = entry.lastIndexOf('=');
    if (entry.slice(0, at) === ref) return entry.slice(at + 1) as ApiMode;
  }
  return undefined;
}

/** `openrouter` → `OPENROUTER`, `local-vllm` → `LOCAL_VLLM`: the prefix of an endpoint's variables. */
export function envPrefix(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * Every key of one pool, in order and without repeats: the single variable, the list, then the numbered ones
 * (`_2`, `_3`, … in numeric order; gaps allowed).
 */
export function gatherKeys(env: NodeJS.ProcessEnv, prefix: string, ...lists: (readonly string[] | string | undefined)[]): string[] {
  const numbered = Object.entries(env)
    .map(([k, v]) => ({ n: new RegExp(`^${prefix}_API_KEY_(\\d+)$`).exec(k)?.[1], v }))
    .filter((e): e is { n: string; v: string } => e.n !== undefined && typeof e.v === 'string' && e.v.trim() !== '')
    .sort((a, b) => Number(a.n) - Number(b.n))
    .map((e) => e.v.trim());
  const given = lists.flatMap((l) => (l === undefined ? [] : typeof l === 'string' ? [l] : l));
  return [...new Set([...given, ...numbered].map((k) => k.trim()).filter(Boolean))];
}
