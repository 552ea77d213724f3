/**
 * Agent profile names. `default` is the profile made of the top-level settings (HERALD_MODEL, HERALD_SYSTEM_PROMPT,
 * …); it always exists. Its sessions keep Hermes' `agent:main:` key prefix, so upgrading changes no session key.
 */
export const DEFAULT_PROFILE = 'default';
/** The session-key segment of the default profile (Hermes' single agent is `main`; features/profiles/table.ts profileKeySegment). */
export const DEFAULT_PROFILE_KEY = 'main';
export const PROFILE_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const PROFILE_NAME_RULE = 'a profile name is lower-case letters, digits, _ and -, at most 32 characters';

/** What sessions.profile records: null for the default profile (as every session from before profiles). */
export function profileColumn(name: string): string | null {
  return name === DEFAULT_PROFILE ? null : name;
}
