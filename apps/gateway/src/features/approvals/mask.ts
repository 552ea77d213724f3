/**
 * A tool call's arguments as a person is shown them (the approval question, the audit record): JSON, with the value
 * of every secret-looking key censored at any depth, the gateway's own secrets scrubbed wherever they appear
 * (support/logger.ts, the same scrubber the logs use), and cut to a readable length.
 */
import { secretScrubber } from '../../support/logger.js';

const MASKED = '[redacted]';
const MAX_SHOWN_CHARS = 600;
/** Keys whose values are credentials whatever the tool: token, apiKey, api_key, client_secret, password, ... */
const SECRET_KEY = /token|secret|passw|api[-_]?key|authori[sz]ation|credential|private[-_]?key|cookie|session[-_]?id/i;

function censor(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(censor);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_KEY.test(k) ? MASKED : censor(v)]));
}

/** Builds the masker once per process: `secrets` are the configured secret values (configSecrets). */
export function argumentMasker(secrets: readonly string[]): (args: Record<string, unknown>) => string {
  const scrub = secretScrubber([...secrets]);
  return (args) => {
    const text = scrub(JSON.stringify(censor(args)));
    return text.length > MAX_SHOWN_CHARS ? `${text.slice(0, MAX_SHOWN_CHARS)}… (${text.length - MAX_SHOWN_CHARS} more characters)` : text;
  };
}
