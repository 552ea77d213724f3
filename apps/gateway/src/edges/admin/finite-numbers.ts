/**
 * fastify's schema check coerces a query string such as `limit=1e400` to Infinity and lets it through `integer`
 * with `minimum`/`maximum` (found by the fuzz suite: SQLite then refused the LIMIT with a 500). Every route
 * gets the same guard after validation: a number in the query string or the path that is not finite is a 400 in
 * fastify's own validation-error shape.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

function infiniteField(values: unknown): string | null {
  if (typeof values !== 'object' || values === null) return null;
  for (const [name, v] of Object.entries(values)) {
    if (typeof v === 'number' && !Number.isFinite(v)) return name;
    if (Array.isArray(v) && v.some((x) => typeof x === 'number' && !Number.isFinite(x))) return name;
  }
  return null;
}

export function rejectInfiniteNumbers(app: FastifyInstance): void {
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    for (const [part, values] of [
      ['querystring', req.query],
      ['params', req.params],
    ] as const) {
      const field = infiniteField(values);
      if (field !== null) {
        return reply.code(400).send({ statusCode: 400, code: 'FST_ERR_VALIDATION', error: 'Bad Request', message: `${part}/${field} must be a finite number` });
      }
    }
    return undefined;
  });
}
