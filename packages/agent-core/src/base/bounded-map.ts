/**
 * Caches that must not grow without bound: at `max` entries, the oldest set goes first (a Map keeps insertion
 * order). For lookups whose keys are a few in practice (model names, SQL texts, provider refs) but come from input.
 */

/** Sets `key` in `map`, first dropping its oldest entry when it already holds `max`; returns `value`. */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): V {
  if (map.size >= max && !map.has(key)) map.delete(map.keys().next().value as K);
  map.set(key, value);
  return value;
}
