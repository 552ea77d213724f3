/**
 * The `session_search` tool: full-text search over the same user's earlier conversations (never anyone else's:
 * the search is filtered by the platform and user id of the conversation the tool runs in, which the model
 * cannot change). Results are snippets grouped by conversation, with titles and dates; `summarize: true` asks
 * the provider to condense them into a short answer instead.
 */
import type { Provider } from '../providers/types.js';
import type { SearchHit } from '../store/fts.js';
import type { SessionStore } from '../store/session-store.js';
import type { Tool } from '../tools/registry.js';
import { optionalIntArg, searchProfileOf, sessionIdOf, sideProviderOf, sourceOf, stringArg, userIdOf } from './context.js';
import { MEMORY_BLOCK_OPEN, stripMemoryBlock } from './memory.js';

export const SESSION_SEARCH_TOOL = 'session_search';
const DEFAULT_SEARCH_RESULTS = 10;
const MAX_SEARCH_RESULTS = 20;
/** Hits are fetched with room to spare: some are dropped below (current session, memory blocks). */
const OVERFETCH = 3;
const SUMMARY_MAX_TOKENS = 600;
const SUMMARY_SYSTEM_PROMPT =
  "You condense search results from a user's earlier conversations. Answer in a few sentences: what was said " +
  'about the query, in which conversation and when. Use only the results given; say so if they do not answer it.';

export interface SessionSearchDeps {
  store: SessionStore;
  /** Needed only for `summarize: true`. */
  provider?: Provider;
}

interface HitMessage {
  content: string | null;
  tool_name: string | null;
}

interface SessionGroup {
  sessionId: string;
  title: string | null;
  startedAt: number;
  source: string;
  hits: SearchHit[];
}

export function createSessionSearchTool(deps: SessionSearchDeps): Tool {
  const messageOf = (id: number): Promise<HitMessage | undefined> =>
    deps.store.sql.get<HitMessage>('SELECT content, tool_name FROM messages WHERE id = ?', [id]);

  /** Hits worth showing: not in the conversation at hand, not in an earlier search's result, not only in notes. */
  const relevant = async (hit: SearchHit, query: string, currentSession: string | null): Promise<boolean> => {
    if (hit.sessionId === currentSession) return false;
    const msg = await messageOf(hit.messageId);
    if (!msg) return false;
    if (msg.tool_name === SESSION_SEARCH_TOOL) return false;
    if (hit.role === 'user' && msg.content?.startsWith(MEMORY_BLOCK_OPEN)) return mentions(stripMemoryBlock(msg.content), query);
    return true;
  };

  return {
    name: SESSION_SEARCH_TOOL,
    description:
      "Search this user's earlier conversations with you (full text; only theirs). Use it when the user refers " +
      'to something discussed before ("like last time", "the trip we planned"). Returns matching snippets ' +
      '(matches marked >>>like this<<<) grouped by conversation with title and date. Set summarize to true for ' +
      'a short digest instead of the raw snippets.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Words to look for; "quoted phrases" and word* prefixes work' },
        limit: { type: 'integer', description: `How many matches (default ${DEFAULT_SEARCH_RESULTS}, at most ${MAX_SEARCH_RESULTS})` },
        summarize: { type: 'boolean', description: 'Condense the matches into a short answer' },
      },
      required: ['query'],
    },
    readOnly: true,
    async execute(args, ctx) {
      const query = stringArg(args, 'query');
      const userId = userIdOf(ctx);
      const source = sourceOf(ctx);
      // Without both, the filter below could not be scoped to one person: refuse rather than search everyone.
      if (!userId || !source) throw new Error('no user is known for this conversation, so there is nothing to search');
      const limit = Math.min(Math.max(optionalIntArg(args, 'limit') ?? DEFAULT_SEARCH_RESULTS, 1), MAX_SEARCH_RESULTS);
      const current = sessionIdOf(ctx);
      const found = await deps.store.search(query, { userId, source, profile: searchProfileOf(ctx), limit: limit * OVERFETCH });
      const keep = await Promise.all(found.map((h) => relevant(h, query, current)));
      const hits = found.filter((_, i) => keep[i]).slice(0, limit);
      if (hits.length === 0) return `No earlier conversation of this user mentions "${query}".`;
      const listing = formatGroups(await groupBySession(deps.store, hits), hits.length);
      // The turn's own (metered) side-task chain when the caller gives one.
      const provider = sideProviderOf(ctx) ?? deps.provider;
      if (args.summarize !== true || !provider) return listing;
      return summarise(provider, query, listing, ctx.signal);
    },
  };
}

/** Whether any word of the query occurs in `text` (a rough check: FTS5 tokenises, this compares lowercase). */
function mentions(text: string, query: string): boolean {
  const lower = text.toLowerCase();
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return words.some((w) => w.length > 1 && lower.includes(w));
}

async function groupBySession(store: SessionStore, hits: readonly SearchHit[]): Promise<SessionGroup[]> {
  const groups = new Map<string, SessionGroup>();
  for (const hit of hits) {
    let group = groups.get(hit.sessionId);
    if (!group) {
      const session = await store.getSession(hit.sessionId);
      group = {
        sessionId: hit.sessionId,
        title: session?.title ?? hit.title,
        startedAt: session?.startedAt ?? hit.createdAt,
        source: hit.source,
        hits: [],
      };
      groups.set(hit.sessionId, group);
    }
    group.hits.push(hit);
  }
  return [...groups.values()];
}

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function formatGroups(groups: readonly SessionGroup[], total: number): string {
  const header = `${total} ${total === 1 ? 'match' : 'matches'} in ${groups.length} earlier ${groups.length === 1 ? 'conversation' : 'conversations'} (best first):`;
  const blocks = groups.map((g, i) => {
    const title = g.title ? `"${g.title}"` : '(untitled)';
    const lines = g.hits.map((h) => `   ${h.role} (${day(h.createdAt)}): ${oneLine(h.snippet)}`);
    return [`${i + 1}. ${title} · started ${day(g.startedAt)} · ${g.source}`, ...lines].join('\n');
  });
  return [header, '', ...blocks].join('\n');
}

function oneLine(text: string): string {
  return stripMemoryBlock(text).replace(/\s+/g, ' ').trim();
}

async function summarise(provider: Provider, query: string, listing: string, signal: AbortSignal): Promise<string> {
  try {
    const reply = await provider.complete({
      systemPrompt: SUMMARY_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: `Query: ${query}\n\nSearch results:\n${listing}` }],
      tools: [],
      maxTokens: SUMMARY_MAX_TOKENS,
      signal,
    });
    const summary = reply.message.content?.trim();
    if (!summary) return listing;
    const header = listing.split('\n', 1)[0].replace(/ \(best first\):$/, '');
    return `${summary}\n\n(Summarised from ${header}.)`;
  } catch (err) {
    if (signal.aborted) throw err;
    return `${listing}\n\n(Could not summarise: ${err instanceof Error ? err.message : String(err)})`;
  }
}
