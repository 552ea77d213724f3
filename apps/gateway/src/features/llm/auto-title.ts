/**
 * Titles as a side task (Hermes' title generator): after the first exchange of a new conversation, the side-task
 * model names it in a few words, behind the reply, so `/resume`, the console and the sessions API show something
 * better than an id. A title the user set meanwhile is never replaced; a title another conversation already has
 * is skipped (the user can still pick one with /title). On with HERALD_AUTO_TITLE, or by default when
 * HERALD_AUXILIARY_MODEL is set.
 */
import { TitleInUseError, sanitizeTitle, type Provider, type SessionStore } from '@herald/agent-core';
import type { Logger } from '../../support/logger.js';

export const TITLE_SYSTEM_PROMPT =
  'You name conversations. Reply with a short, descriptive title of 3 to 7 words for the conversation that starts ' +
  'with the exchange you are given: its main topic or intent. Only the title: no quotes, no prefix, no full stop.';
/** Room for a few words (reasoning models spend some first). */
const TITLE_MAX_TOKENS = 60;
/** Of each side of the exchange: the topic is in the first lines. */
const EXCERPT_CHARS = 500;
/** Past this the call is abandoned: a title is a nicety. */
const TITLE_TIMEOUT_MS = 30_000;

/** HERALD_AUTO_TITLE when set; else on exactly when a side-task model is configured. */
export function autoTitleEnabled(config: { autoTitle?: boolean; auxiliaryModel?: string }): boolean {
  return config.autoTitle ?? config.auxiliaryModel !== undefined;
}

/** The model's title, cleaned (quotes, a `Title:` prefix and a trailing full stop removed); null when empty. */
async function generateTitle(provider: Provider, userText: string, reply: string, signal: AbortSignal): Promise<string | null> {
  const result = await provider.complete({
    systemPrompt: TITLE_SYSTEM_PROMPT,
    messages: [{ role: 'user', content: `User: ${excerpt(userText)}\n\nAssistant: ${excerpt(reply)}` }],
    tools: [],
    maxTokens: TITLE_MAX_TOKENS,
    signal,
  });
  const line = (result.message.content ?? '').trim().split('\n')[0] ?? '';
  const cleaned = line
    .replace(/^title\s*:\s*/i, '')
    .replace(/^["'“”‘’*_`]+|["'“”‘’*_`]+$/g, '')
    .replace(/[.。]+$/, '');
  return sanitizeTitle(cleaned);
}

export interface TitleSessionInput {
  store: SessionStore;
  provider: Provider;
  sessionId: string;
  userText: string;
  reply: string;
  log: Logger;
}

/** Names an untitled session; resolves with the title set, or null (never rejects: a title is best effort). */
export async function titleNewSession(p: TitleSessionInput): Promise<string | null> {
  try {
    const title = await generateTitle(p.provider, p.userText, p.reply, AbortSignal.timeout(TITLE_TIMEOUT_MS));
    if (title === null) return null;
    const set = await p.store.transaction(async () => {
      // The user may have named it meanwhile (/title): theirs stays.
      if ((await p.store.getSession(p.sessionId))?.title) return null;
      return p.store.setTitle(p.sessionId, title);
    });
    if (set) p.log.info({ sessionId: p.sessionId, title: set }, 'conversation titled');
    return set;
  } catch (err) {
    if (err instanceof TitleInUseError) p.log.info({ sessionId: p.sessionId }, 'generated title already in use; left untitled');
    else p.log.warn({ sessionId: p.sessionId, err: err instanceof Error ? err.message : String(err) }, 'title generation failed');
    return null;
  }
}

function excerpt(text: string): string {
  const t = text.trim();
  return t.length > EXCERPT_CHARS ? `${t.slice(0, EXCERPT_CHARS)}…` : t;
}
