/**
 * An OpenAPI 3.1 document built from the schemas the admin routes already declare for validation, collected by
 * an onRoute hook — so the document cannot drift from what the routes accept and return. Routes marked
 * `schema.hide` (the queue dashboard's internals) are left out.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';

type Json = Record<string, unknown>;

interface CollectedRoute {
  method: string;
  url: string;
  schema: Json;
}

export interface OpenApiCollector {
  /** Call before registering the routes to document (the hook sees routes added after it). */
  attach(app: FastifyInstance): void;
  document(info: { title: string; version: string }): Json;
}

export function openApiCollector(): OpenApiCollector {
  const routes: CollectedRoute[] = [];
  return {
    attach(app) {
      app.addHook('onRoute', (route: RouteOptions) => {
        const schema = (route.schema ?? {}) as Json;
        if (schema.hide === true) return;
        const methods = (Array.isArray(route.method) ? route.method : [route.method]).filter((m) => m !== 'HEAD');
        for (const method of methods) routes.push({ method: method.toLowerCase(), url: route.url, schema });
      });
    },
    document(info) {
      const paths: Record<string, Json> = {};
      for (const r of routes) {
        const path = r.url.replace(/:(\w+)/g, '{$1}');
        (paths[path] ??= {})[r.method] = operation(r);
      }
      return {
        openapi: '3.1.0',
        info,
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'HERALD_ADMIN_TOKEN' } } },
        security: [{ bearer: [] }],
        paths,
      };
    },
  };
}

function operation(r: CollectedRoute): Json {
  const { schema } = r;
  const op: Json = {};
  if (typeof schema.summary === 'string') op.summary = schema.summary;
  if (typeof schema.description === 'string') op.description = schema.description;
  if (Array.isArray(schema.tags)) op.tags = schema.tags;
  const parameters = [...parametersOf(schema.params as Json | undefined, 'path'), ...parametersOf(schema.querystring as Json | undefined, 'query')];
  if (parameters.length > 0) op.parameters = parameters;
  if (schema.body) op.requestBody = { required: true, content: { 'application/json': { schema: schema.body } } };
  const responses: Json = {};
  for (const [code, body] of Object.entries((schema.response ?? {}) as Json)) {
    const b = body as Json;
    responses[code] = { description: typeof b.description === 'string' ? b.description : `${code} response`, content: { 'application/json': { schema: b } } };
  }
  responses['401'] ??= { description: 'Missing or wrong bearer token' };
  op.responses = responses;
  return op;
}

function parametersOf(objectSchema: Json | undefined, where: 'path' | 'query'): Json[] {
  if (!objectSchema || typeof objectSchema.properties !== 'object') return [];
  const required = new Set(Array.isArray(objectSchema.required) ? (objectSchema.required as string[]) : []);
  return Object.entries(objectSchema.properties as Json).map(([name, s]) => {
    const param: Json = { name, in: where, required: where === 'path' || required.has(name), schema: s };
    const description = (s as Json).description;
    if (typeof description === 'string') param.description = description;
    return param;
  });
}

// The documentation keywords the admin routes use, as @fastify/swagger declares them (it is not installed).
declare module 'fastify' {
  interface FastifySchema {
    summary?: string;
    description?: string;
    tags?: readonly string[];
    hide?: boolean;
  }
}
