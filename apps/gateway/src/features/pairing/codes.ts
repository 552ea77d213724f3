/**
 * Pairing codes (Hermes' rules): 8 characters from an alphabet without look-alikes (no 0/O, 1/I), typed back
 * case-insensitively, and only ever stored as a sha256 hash.
 */
import { createHash, randomInt } from 'node:crypto';

export const PAIRING_CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const PAIRING_CODE_LENGTH = 8;

export function generatePairingCode(): string {
  let code = '';
  for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_CODE_ALPHABET[randomInt(PAIRING_CODE_ALPHABET.length)];
  return code;
}

/** What the admin typed → the canonical code: upper case, spaces and dashes dropped (`abcd-efgh` works). */
function normalizePairingCode(input: string): string {
  return input.replace(/[\s-]/g, '').toUpperCase();
}

export function hashPairingCode(code: string): string {
  return createHash('sha256').update(normalizePairingCode(code)).digest('hex');
}
