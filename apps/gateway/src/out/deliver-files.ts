/**
 * Uploading the files a recorded reply carries, after its text, one at a time in order. Each file is recorded as
 * the platform takes it (its id) or as given up (why), the way the text's chunks are recorded, so a re-run after a
 * crash uploads only the files still pending: none twice, except the one in flight at the crash (on Discord even
 * that one comes back as the first upload: it carries a nonce). Network errors and short rate limits are
 * retried; what the platform refuses (too large, no permission) or a long rate limit gives the user one short
 * notice instead, and the rest of the reply goes on.
 */
import { NetworkError, RateLimitedError, type PlatformEgress } from '@herald/adapters';
import type { SessionStore, TurnFile } from '@herald/agent-core';
import pRetry from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../support/logger.js';
import { canNotify, uploadFailureNotice } from './notices.js';
import { DELIVERY_BASE_DELAY_MS, DELIVERY_RETRIES } from './limits.js';
import { untilStored } from './until-stored.js';

/** A rate limit longer than this is not waited for: the file is given up with a notice saying when to ask again. */
const UPLOAD_MAX_RATE_LIMIT_WAIT_MS = 60_000;

export interface FileDeliveryTarget {
  store: SessionStore;
  egress: PlatformEgress;
  conversationId: string;
  turnId: string;
  log: Logger;
  /** Keeps the turn's watchdog away while megabytes go up. */
  touch: () => void;
  baseDelayMs?: number;
}

/** Uploads what is pending; returns how many files went out in this call. */
export async function deliverFiles(t: FileDeliveryTarget): Promise<number> {
  const pending = (await untilStored(() => t.store.getTurnFiles(t.turnId), t.log, "read the reply's files")).filter(
    (f) => f.sentId === null && f.failure === null && f.data !== null,
  );
  let sent = 0;
  for (const file of pending) {
    t.touch();
    try {
      const id = await upload(t, file);
      await untilStored(() => t.store.markFileSent(t.turnId, file.seq, id), t.log, 'record an uploaded file');
      sent++;
    } catch (err) {
      const notice = uploadFailureNotice(file, t.egress.platform, err);
      // The file is never named by its content; the error is the platform's, which carries no token.
      t.log.warn(
        { file: file.name, kind: file.kind, size: file.size, err: err instanceof Error ? `${err.name}: ${err.message}` : String(err) },
        'a file of the reply could not be sent; telling the user',
      );
      await untilStored(() => t.store.markFileFailed(t.turnId, file.seq, notice), t.log, 'record a file given up');
      if (canNotify(err)) {
        await t.egress
          .send(t.conversationId, notice, { plain: true })
          .catch((e: unknown) => t.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'could not send the upload notice'));
      }
    }
  }
  return sent;
}

function upload(t: FileDeliveryTarget, file: TurnFile): Promise<string> {
  const base = t.baseDelayMs ?? DELIVERY_BASE_DELAY_MS;
  const { data, kind, name, mimeType, caption, durationSec } = file;
  const outbound = { kind, name, mimeType, data: data as Buffer, ...(caption !== undefined && { caption }), ...(durationSec !== undefined && { durationSec }) };
  const waitable = (err: unknown): boolean =>
    err instanceof NetworkError || (err instanceof RateLimitedError && err.retryAfterMs <= UPLOAD_MAX_RATE_LIMIT_WAIT_MS);
  return pRetry(() => t.egress.sendFile(t.conversationId, outbound, { idempotencyKey: `${t.turnId}:file:${file.seq}` }), {
    retries: DELIVERY_RETRIES,
    // The waits are ours, below: the platform's retry-after, or the delivery backoff for network errors.
    minTimeout: 0,
    shouldRetry: ({ error }) => waitable(error),
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      if (!waitable(error) || retriesLeft === 0) return;
      const wait = error instanceof RateLimitedError ? error.retryAfterMs : base * 2 ** (attemptNumber - 1);
      t.log.info({ file: name, attempt: attemptNumber, waitMs: wait }, 'upload failed; retrying');
      t.touch();
      await sleep(wait);
    },
  });
}
