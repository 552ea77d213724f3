/**
 * Matrix adapter (client-server API through matrix-js-sdk's HTTP API): one /sync loop per bot account, REST
 * egress (HTML messages, edits, reactions, typing, media), authenticated media downloads. Encrypted rooms refused.
 */
export { MatrixIngress, type ThreadMemory as MatrixThreadMemory } from './ingress.js';
export { MatrixEgress } from './egress.js';
export { MatrixFiles } from './files.js';
export { MatrixClient } from './client.js';
export { matrixCodec } from './codec.js';
export { MATRIX_ENCRYPTED_REFUSAL, type MatrixIngressMemory } from './config.js';
export { MATRIX_OFFER_MAX_BUTTONS, offerData } from './memory.js';
