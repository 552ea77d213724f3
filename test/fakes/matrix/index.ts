/**
 * A Matrix homeserver stand-in on 127.0.0.1, written from the Client-Server API spec (v1.11+): the routes a bot
 * without end-to-end encryption calls (versions, whoami, filters, /sync long poll, send/redact with idempotent
 * transaction ids, state, typing, receipts, join/leave, members, profiles, account data, media upload and the
 * authenticated media download), the spec's `{errcode, error}` bodies, and test controls. Interface:
 * /work/notes/matrix-fake-api.md (and the doc comments on MatrixFake).
 */
import { MatrixFake } from './server.js';
import type { MatrixFakeOptions } from './types.js';

export { MatrixFake } from './server.js';
export { editContent, mediaContent, reactionContent, textContent, type MediaOptions, type TextOptions } from './content.js';
export type * from './types.js';

export async function startMatrixFake(opts: MatrixFakeOptions = {}): Promise<MatrixFake> {
  const fake = new MatrixFake(opts);
  await fake.listen();
  return fake;
}
