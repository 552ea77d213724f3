/**
 * Values of a shape nobody promised, where any field may hold anything: parsed JSON or YAML (a model's tool
 * arguments, a foreign tool schema, a request body, a config file) or something thrown (an SDK error's body).
 */

/** An object: not null, not an array. A class instance or an object without a prototype counts too. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` when isRecord says it is an object, else a new empty one. */
export function recordOr(v: unknown): Record<string, unknown> {
  return isRecord(v) ? v : {};
}
