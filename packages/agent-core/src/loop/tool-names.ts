/**
 * Models misspell tool names ("WebSearch", "web-search", "web_search_tool", "web_serch"). Repairing the obvious
 * cases saves a round trip; anything still unknown gets an error result that lists the valid names.
 */

/** Normalised similarity at or above which a misspelt name is taken to mean a known tool. */
export const FUZZY_MATCH_THRESHOLD = 0.7;

const TOOL_SUFFIX = '_tool';

/** CamelCase → snake_case, lowercase, `-` and spaces → `_`. */
export function normaliseToolName(name: string): string {
  return name
    .trim()
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[-\s]+/g, '_')
    .replace(/_+/g, '_');
}

/** 1 − Levenshtein distance / length of the longer string: 1 for equal strings, 0 for nothing in common. */
export function similarity(a: string, b: string): number {
  const longer = Math.max(a.length, b.length);
  if (longer === 0) return 1;
  return 1 - levenshtein(a, b) / longer;
}

function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length];
}

/**
 * The valid tool name `name` most likely means, or null. Exact names win; then the normalised name (with and
 * without a trailing `_tool`); then the most similar valid name when similarity ≥ FUZZY_MATCH_THRESHOLD.
 */
export function repairToolName(name: string, valid: readonly string[]): string | null {
  if (valid.includes(name)) return name;
  const byNormalised = new Map<string, string>();
  for (const v of valid) if (!byNormalised.has(normaliseToolName(v))) byNormalised.set(normaliseToolName(v), v);

  const normalised = normaliseToolName(name);
  const candidates = [normalised];
  if (normalised.endsWith(TOOL_SUFFIX) && normalised.length > TOOL_SUFFIX.length) {
    candidates.push(normalised.slice(0, -TOOL_SUFFIX.length));
  }
  for (const candidate of candidates) {
    const hit = byNormalised.get(candidate);
    if (hit !== undefined) return hit;
  }

  let best: string | null = null;
  let bestScore = FUZZY_MATCH_THRESHOLD;
  for (const [normalisedValid, original] of byNormalised) {
    for (const candidate of candidates) {
      const score = similarity(candidate, normalisedValid);
      if (score >= bestScore && (best === null || score > bestScore)) {
        best = original;
        bestScore = score;
      }
    }
  }
  return best;
}
