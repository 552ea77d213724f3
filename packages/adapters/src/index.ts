/** @herald/adapters: the platform contract, shared helpers and typed errors. Platforms: ./telegram, ./discord, ./slack. */
export * from './types.js';
export * from './errors.js';
export { chunkMessage, fencesBalanced } from './shared/chunk.js';
export { RecentIds } from './shared/recent-ids.js';
export { KeyedSerial } from './shared/keyed-serial.js';
export { InFlight } from './shared/in-flight.js';
export { platformDisplayName } from './shared/platform-name.js';
