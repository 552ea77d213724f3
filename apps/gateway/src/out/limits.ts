/**
 * What the agent may send to the chat, from the settings: the largest file and the types allowed
 * (HERALD_OUTBOUND_FILE_MAX_MB, HERALD_OUTBOUND_FILE_TYPES), and how much one reply may carry
 * (HERALD_OUTBOUND_FILES_PER_TURN files, and at most REPLY_FILES_MAX_BYTES together: a turn holds them in memory).
 */
import type { OutboundFileLimits } from '@herald/agent-core';
import type { HeraldConfig } from '../support/config/load.js';

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
