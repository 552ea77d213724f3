/**
 * Who may call /v1: a request with `Authorization: Bearer <key>` for one of HERALD_API_KEYS. A key is never logged
 * or stored; it is known by its label, a short digest (`key-1a2b3c4d5e`), which scopes its sessions and its rate
 * limit and stands for the caller in the store when the request names no `user`.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sameToken } from '../admin/auth.js';
import { ApiError, sendApiError } from './errors.js';

export interface ApiCaller {
  keyLabel: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    apiCaller?: ApiCaller;
  }
}

function keyLabel(key: string): string {
  return `key-${createHash('sha256').update(key).digest('hex').slice(0, 10)}`;
}

const MISSING = new ApiError(
  401,
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
  'invalid_request_error',
);
const WRONG = new ApiError(401, 'Incorrect API key provided. Use one of the keys set in HERALD_API_KEYS.', 'invalid_request_error', 'invalid_api_key');

/** The /v1 context's onRequest hook: sets `req.apiCaller`, or answers 401. */
export function apiAuth(keys: readonly string[]) {
  const known = keys.map((key) => ({ key, label: keyLabel(key) }));
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) return sendApiError(reply, MISSING);
    // Every key is compared (in constant time each), so the answer's timing does not say which one came close.
    let match: string | null = null;
    for (const k of known) if (sameToken(m[1], k.key)) match = k.label;
    if (match === null) return sendApiError(reply, WRONG);
    req.apiCaller = { keyLabel: match };
  };
}
