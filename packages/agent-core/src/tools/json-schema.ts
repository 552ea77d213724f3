/**
 * Tool schemas from elsewhere (MCP servers) in a shape both providers accept. The built-in tools are written to
 * fit; a foreign schema can break every request of a turn with one 400, so it is repaired once, when the tool is
 * discovered:
 *   - Anthropic: `input_schema` must be `type: "object"`, and `oneOf` / `anyOf` / `allOf` are refused at its top
 *     level ("input_schema does not support oneOf, allOf, or anyOf at the top level");
 *   - OpenAI: `parameters` must be `type: "object"`; an object schema without `properties` and an array schema
 *     without `items` are refused ("array schema missing items"), and so is a `properties` entry that is not a
 *     schema.
 * What is dropped only loosens the description the model sees; the server still validates its own arguments.
 */
import { isRecord, recordOr } from '../base/json-values.js';
import type { JsonSchema } from '../providers/types.js';

/** Keys neither API lets stand at the top of a tool's schema. */
const TOP_LEVEL_DROPPED = ['$schema', 'oneOf', 'anyOf', 'allOf', 'not', 'enum', 'const', 'if', 'then', 'else'];
/** Keys whose value is one schema. */
const SCHEMA_KEYS = ['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'unevaluatedProperties', 'additionalItems'];
/** Keys whose value is a list of schemas. */
const SCHEMA_LIST_KEYS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
/** Keys whose value maps names to schemas. */
const SCHEMA_MAP_KEYS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
/** Deeper than this, a schema is cut to "anything" (a hostile server could nest without end). */
const MAX_DEPTH = 32;

/** The schema for a tool's arguments: always an object schema with properties, repaired as described above. */
export function toToolParameters(schema: unknown): JsonSchema {
  const top = isRecord(schema) ? repair(schema, 0) : {};
  for (const key of TOP_LEVEL_DROPPED) delete top[key];
  const properties = recordOr(top.properties);
  const required = Array.isArray(top.required) ? top.required.filter((r): r is string => typeof r === 'string') : [];
  delete top.required;
  return { ...top, type: 'object', properties, ...(required.length > 0 && { required }) };
}

function repair(schema: Record<string, unknown>, depth: number): Record<string, unknown> {
  if (depth > MAX_DEPTH) return {};
  const out: Record<string, unknown> = { ...schema };
  delete out.$schema;
  for (const key of SCHEMA_KEYS) {
    if (isRecord(out[key])) out[key] = repair(out[key], depth + 1);
    else if (out[key] !== undefined && typeof out[key] !== 'boolean') delete out[key];
  }
  for (const key of SCHEMA_LIST_KEYS) {
    const list = out[key];
    if (list === undefined) continue;
    if (Array.isArray(list)) out[key] = list.filter(isRecord).map((s) => repair(s, depth + 1));
    else delete out[key];
  }
  for (const key of SCHEMA_MAP_KEYS) {
    const map = out[key];
    if (map === undefined) continue;
    if (!isRecord(map)) {
      delete out[key];
      continue;
    }
    // A value that is not a schema (a server that put `"type": "object"` among its properties) is left out.
    out[key] = Object.fromEntries(
      Object.entries(map).flatMap(
        ([name, value]): Array<[string, unknown]> => (isRecord(value) ? [[name, repair(value, depth + 1)]] : typeof value === 'boolean' ? [[name, value]] : []),
      ),
    );
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if (types.includes('array') && out.items === undefined && out.prefixItems === undefined) out.items = {};
  if (types.includes('object') && out.properties === undefined && depth === 0) out.properties = {};
  return out;
}
