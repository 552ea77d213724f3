/**
 * Authentication before routing, through fastify's inject: without the token an unknown /admin path and a known
 * one get the same 401 (no way to map the routes); with it, the known one answers and the unknown one is a 404.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { adminGate } from './auth.js';

const TOKEN = 'gate-admin-token-0123456789';
const BEARER = { authorization: `Bearer ${TOKEN}` };

async function app(): Promise<FastifyInstance> {
  const root = Fastify();
  root.addHook('onRequest', adminGate(TOKEN));
  root.get('/health', async () => ({ status: 'ok' }));
  // Like mountAdminApi: the routes in their own context, the gate on the root.
  await root.register(async (admin) => {
    admin.get('/admin/sessions', async () => ({ sessions: [] }));
  });
  return root;
}

describe('adminGate', () => {
  it('answers 401 for every path under /admin without the token, routed or not', async () => {
    const a = await app();
    for (const url of ['/admin/sessions', '/admin/no-such-route', '/admin', '/admin/', '/%61dmin/sessions', '/admin/sessions?x=1']) {
      const res = await a.inject({ url });
      expect(res.statusCode, url).toBe(401);
      expect(res.headers['www-authenticate'], url).toBe('Bearer realm="herald-admin"');
    }
    expect((await a.inject({ url: '/admin/no-such-route', headers: { authorization: 'Bearer wrong-token-0123456789' } })).statusCode).toBe(401);
  });

  it('routes only once the token is right: the known path answers, the unknown one is a 404', async () => {
    const a = await app();
    expect((await a.inject({ url: '/admin/sessions', headers: BEARER })).json()).toEqual({ sessions: [] });
    expect((await a.inject({ url: '/admin/no-such-route', headers: BEARER })).statusCode).toBe(404);
  });

  it('leaves every other path alone', async () => {
    const a = await app();
    expect((await a.inject({ url: '/health' })).statusCode).toBe(200);
    expect((await a.inject({ url: '/administrator' })).statusCode).toBe(404);
  });
});
