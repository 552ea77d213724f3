/** Pairing of unknown users (see service.ts): the API the router, the CLI and the admin routes share. */
export {
  PairingService,
  parsePlatform,
  UnknownPlatformNameError,
  PLATFORMS,
  PAIRING_CODE_TTL_MS,
  PAIRING_REQUEST_INTERVAL_MS,
  PAIRING_MAX_PENDING_PER_PLATFORM,
  PAIRING_MAX_FAILED_APPROVALS,
  PAIRING_LOCKOUT_MS,
  type ApprovedUser,
  type PairingApproveResult,
  type PairingOptions,
  type PairingRequestResult,
  type PendingPairing,
} from './service.js';
export { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, generatePairingCode, hashPairingCode, normalizePairingCode } from './codes.js';
export { PAIRING_MIGRATION_VERSION, PAIRING_SCHEMA } from './schema.js';
