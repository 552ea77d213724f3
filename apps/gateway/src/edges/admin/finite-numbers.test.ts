import { describe, expect, it } from 'vitest';
import { fastify } from 'fastify';
import { rejectInfiniteNumbers } from './finite-numbers.js';

describe('rejectInfiniteNumbers', () => {
  it('answers 400 for a query number fastify coerced to Infinity, and leaves finite ones alone', async () => {
    const app = fastify();
    rejectInfiniteNumbers(app);
    const limit = { type: 'integer', minimum: 1, maximum: 1000, default: 100 } as const;
    app.get('/x', { schema: { querystring: { type: 'object', properties: { limit } } } }, async (req) => ({ limit: (req.query as { limit: number }).limit }));
    for (const bad of ['1e400', '-1e400']) {
      const res = await app.inject(`/x?limit=${bad}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'FST_ERR_VALIDATION', message: 'querystring/limit must be a finite number' });
    }
    expect((await app.inject('/x?limit=7')).json()).toEqual({ limit: 7 });
    expect((await app.inject('/x')).json()).toEqual({ limit: 100 });
    await app.close();
  });
});
