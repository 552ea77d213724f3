/** Pairing of unknown users (see service.ts): the API the router, the CLI and the admin routes share. */
export {
  PairingService,
  parsePlatform,
  UnknownPlatformNameError,
  PLATFORMS,
  type ApprovedUser,
  type PairingRequestResult,
  type PendingPairing,
} from './service.js';
