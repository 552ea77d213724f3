/**
 * Full-text search over messages (FTS5), and turning whatever a user typed into a query FTS5 accepts.
 *
 * FTS5 has its own grammar: quotes, parentheses, `+`, `^`, `:` column filters, `*` prefixes and the binary
 * operators AND / OR / NOT. Raw user text regularly breaks it ("C++", "chat-send", "hello AND"), so the
 * query is rebuilt from pieces that are valid by construction instead of patched with regexes.
 */
import type { SessionSource, Role } from '../types.js';
import type { StoreDb } from './db.js';
import { clampLimit } from './limit.js';

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
/** Tokens of context `snippet()` shows around a hit. */
const SNIPPET_TOKENS = 16;
export const SNIPPET_OPEN = '>>>';
export const SNIPPET_CLOSE = '<<<';

type Operator = 'AND' | 'OR' | 'NOT';
type QueryItem = { kind: 'term'; text: string } | { kind: 'op'; op: Operator };

const OPERATORS = new Set<string>(['AND', 'OR', 'NOT']);
const WHITESPACE = /\s/u;
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;
const EDGE_NON_WORD = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;
// FTS5 barewords: ASCII letters, digits, underscore, or anything outside ASCII. Anything else must be quoted.
const BAREWORD = /^[A-Za-z0-9_\u0080-\u{10FFFF}]+$/u;

/**
 * A query FTS5 accepts for any input (possibly '' when nothing searchable is left):
 * balanced "phrases" are kept and an unbalanced quote is dropped; dangling and repeated operators are removed
 * (uppercase AND / OR / NOT only, as in FTS5); `word*` keeps its prefix star and a stray `*` goes; punctuation
 * at the edges of a word goes (`C++` → `C`); a word with punctuation inside becomes a phrase
 * (`chat-send` → `"chat-send"`), which matches the same tokens in the same order.
 */
export function sanitizeFtsQuery(query: string): string {
  const items: QueryItem[] = [];
  let word = '';
  const flushWord = (): void => {
    const item = wordItem(word);
    if (item) items.push(item);
    word = '';
  };
  let i = 0;
  while (i < query.length) {
    const ch = query[i];
    if (ch === '"') {
      flushWord();
      const close = query.indexOf('"', i + 1);
      if (close === -1) {
        i++; // unbalanced quote: dropped
        continue;
      }
      const prefix = query[close + 1] === '*';
      const phrase = query.slice(i + 1, close);
      if (HAS_WORD_CHAR.test(phrase)) items.push({ kind: 'term', text: `"${phrase}"${prefix ? '*' : ''}` });
      i = close + (prefix ? 2 : 1);
      continue;
    }
    if (WHITESPACE.test(ch)) flushWord();
    else word += ch;
    i++;
  }
  flushWord();
  return joinItems(items);
}

function wordItem(raw: string): QueryItem | null {
  if (raw === '') return null;
  const prefix = raw.endsWith('*');
  const core = raw.replace(EDGE_NON_WORD, '');
  if (OPERATORS.has(core)) return { kind: 'op', op: core as Operator };
  if (core === '') return null;
  const text = BAREWORD.test(core) ? core : `"${core}"`;
  return { kind: 'term', text: prefix ? `${text}*` : text };
}

/** Operators only between two terms, and one at a time (the last one typed wins: `a AND NOT b` → `a NOT b`). */
function joinItems(items: readonly QueryItem[]): string {
  const out: QueryItem[] = [];
  for (const item of items) {
    const previous = out[out.length - 1];
    if (item.kind === 'op') {
      if (!previous) continue;
      if (previous.kind === 'op') out.pop();
    }
    out.push(item);
  }
  if (out[out.length - 1]?.kind === 'op') out.pop();
  return out.map((item) => (item.kind === 'op' ? item.op : item.text)).join(' ');
}

export interface SearchOptions {
  source?: SessionSource;
  userId?: string;
  limit?: number;
}

export interface SearchHit {
  sessionId: string;
  source: SessionSource;
  title: string | null;
  messageId: number;
  role: Role;
  /** The matching passage, hits wrapped in `>>>` and `<<<`. */
  snippet: string;
  createdAt: number;
}

interface SearchRow {
  session_id: string;
  source: SessionSource;
  title: string | null;
  message_id: number;
  role: Role;
  snippet: string;
  created_at: number;
}

/** Best matches first (FTS5 rank); an empty or unsearchable query finds nothing rather than failing. */
export function searchMessages(db: StoreDb, query: string, opts: SearchOptions = {}): SearchHit[] {
  const match = sanitizeFtsQuery(query);
  if (match === '') return [];
  const limit = clampLimit(opts.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT);
  const filters: string[] = [];
  const params: unknown[] = [match];
  if (opts.source) {
    filters.push('s.source = ?');
    params.push(opts.source);
  }
  if (opts.userId !== undefined) {
    filters.push('s.user_id = ?');
    params.push(opts.userId);
  }
  params.push(limit);
  const sql = `
    SELECT m.session_id, s.source, s.title, m.id AS message_id, m.role, m.created_at,
           snippet(messages_fts, 0, '${SNIPPET_OPEN}', '${SNIPPET_CLOSE}', '...', ${SNIPPET_TOKENS}) AS snippet
    FROM messages_fts
    JOIN messages m ON m.id = messages_fts.rowid
    JOIN sessions s ON s.id = m.session_id
    WHERE messages_fts MATCH ? ${filters.map((f) => `AND ${f}`).join(' ')}
    ORDER BY rank, m.id DESC
    LIMIT ?`;
  const rows = db.read(() => db.raw.prepare(sql).all(...params) as SearchRow[]);
  return rows.map((r) => ({
    sessionId: r.session_id,
    source: r.source,
    title: r.title,
    messageId: r.message_id,
    role: r.role,
    snippet: r.snippet,
    createdAt: r.created_at,
  }));
}
