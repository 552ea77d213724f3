/**
 * The tool-schema rules the real APIs enforce, with their error messages, so a schema the gateway passes on
 * unrepaired (an MCP server's) fails here as it would there:
 *   - OpenAI (`tools[i].function.parameters`): a JSON Schema of type object; an object schema needs `properties`,
 *     an array schema needs `items`, and each `properties` value must be a schema
 *     ("Invalid schema for function 'f': In context=('properties', 'tags'), array schema missing items.");
 *   - Anthropic (`tools.i.custom.input_schema`): type must be object, and no oneOf / allOf / anyOf at the top
 *     ("input_schema does not support oneOf, allOf, or anyOf at the top level").
 */
import { isRecord } from './server.js';

/** The first OpenAI rule the schema breaks, as the API words it; null when it passes. */
export function openAIParametersError(name: string, schema: unknown): string | null {
  if (!isRecord(schema) || schema.type !== 'object') {
    return `Invalid schema for function '${name}': schema must be a JSON Schema of 'type: "object"', got 'type: "${isRecord(schema) ? String(schema.type ?? 'None') : 'None'}"'.`;
  }
  const problem = walk(schema, []);
  return problem === null ? null : `Invalid schema for function '${name}': In context=(${problem.path.map((p) => `'${p}'`).join(', ')}), ${problem.message}.`;
}

function walk(schema: Record<string, unknown>, path: string[]): { path: string[]; message: string } | null {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('object') && path.length === 0 && !isRecord(schema.properties)) return { path, message: 'object schema missing properties' };
  if (types.includes('array') && schema.items === undefined && schema.prefixItems === undefined) return { path, message: 'array schema missing items' };
  if (isRecord(schema.properties)) {
    for (const [key, value] of Object.entries(schema.properties)) {
      if (!isRecord(value) && typeof value !== 'boolean')
        return { path: [...path, 'properties', key], message: `'${String(value)}' is not of type 'object', 'boolean'` };
      if (isRecord(value)) {
        const inner = walk(value, [...path, 'properties', key]);
        if (inner) return inner;
      }
    }
  }
  if (isRecord(schema.items)) return walk(schema.items, [...path, 'items']);
  return null;
}

/** The first Anthropic rule the schema breaks, as the API words it (without the `tools.i.custom.` path); null when it passes. */
export function anthropicInputSchemaError(schema: Record<string, unknown>): string | null {
  if (schema.type !== 'object') return "input_schema.type: Input should be 'object'";
  if (['oneOf', 'allOf', 'anyOf'].some((k) => k in schema)) return 'input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level';
  return null;
}
