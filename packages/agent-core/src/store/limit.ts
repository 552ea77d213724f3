/** A caller-supplied page size made safe: absent or not a number → `fallback`, else clamped to 1..`max`. */
export function clampLimit(limit: number | undefined, fallback: number, max: number): number {
  if (limit === undefined || !Number.isFinite(limit)) return fallback;
  return Math.min(max, Math.max(1, Math.floor(limit)));
}
