/**
 * What the agent may send to the chat, from the settings: the largest file and the types allowed
 * (HERALD_OUTBOUND_FILE_MAX_MB, HERALD_OUTBOUND_FILE_TYPES), and how much one reply may carry
 * (HERALD_OUTBOUND_FILES_PER_TURN files, and at most REPLY_FILES_MAX_BYTES together: a turn holds them in memory);
 * and how often a send that failed on the network is tried again (the reply's text and its files alike).
 */
import type { OutboundFileLimits } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';

/** Retries of a send after a network error or a platform's rate limit, 2 s × 2ⁿ apart (out/send-reply.ts deliver). */
export const DELIVERY_RETRIES = 2;
export const DELIVERY_BASE_DELAY_MS = 2_000;

/** Bytes one reply's files may add up to (or one file of the largest allowed size, when that is more). */
const REPLY_FILES_MAX_BYTES = 50 * 1024 * 1024;

export interface OutboundLimits {
  file: OutboundFileLimits;
  perTurn: number;
  replyBytes: number;
}

export function outboundLimits(config: Pick<HeraldConfig, 'outboundFileMaxMb' | 'outboundFileTypes' | 'outboundFilesPerTurn'>): OutboundLimits {
  const maxBytes = config.outboundFileMaxMb * 1024 * 1024;
  return { file: { maxBytes, types: config.outboundFileTypes }, perTurn: config.outboundFilesPerTurn, replyBytes: Math.max(maxBytes, REPLY_FILES_MAX_BYTES) };
}
