/**
 * Turning whatever a user typed into a full-text query the database accepts, for FTS5 (SQLite) and tsquery
 * (PostgreSQL) alike.
 *
 * FTS5 has its own grammar: quotes, parentheses, `+`, `^`, `:` column filters, `*` prefixes and the binary
 * operators AND / OR / NOT. Raw user text regularly breaks it ("C++", "chat-send", "hello AND"), so the
 * query is rebuilt from pieces that are valid by construction instead of patched with regexes. The same pieces
 * make a tsquery with the same meaning: adjacent terms and AND are `&`, OR is `|`, NOT is `& !`, a phrase is
 * its words joined by `<->`, and `word*` is the prefix `word:*`. Precedence agrees (NOT, then AND, then OR).
 */
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
  return joinItems(parseQuery(query))
    .map((item) => (item.kind === 'op' ? item.op : item.text))
    .join(' ');
}

/** The pieces of a query, valid by construction, with dangling and repeated operators removed. */
function parseQuery(query: string): QueryItem[] {
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
  return items;
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
function joinItems(items: readonly QueryItem[]): QueryItem[] {
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
  return out;
}

const TS_OPERATORS: Record<Operator, string> = { AND: '&', OR: '|', NOT: '& !' };
const WORD_RUN = /[\p{L}\p{N}]+/gu;

/** A tsquery lexeme, quoted so nothing in it is read as an operator. */
function lexeme(word: string, prefix: boolean): string {
  return `'${word.replace(/['\\]/g, (c) => c + c)}'${prefix ? ':*' : ''}`;
}

/** One FTS5 term (`word`, `word*`, `"a phrase"`, `"a phrase"*`) as a tsquery operand. */
function tsTerm(text: string): string | null {
  const prefix = text.endsWith('*');
  const core = prefix ? text.slice(0, -1) : text;
  const words = core.match(WORD_RUN) ?? [];
  if (words.length === 0) return null;
  const parts = words.map((w, i) => lexeme(w, prefix && i === words.length - 1));
  return parts.length === 1 ? parts[0] : `(${parts.join(' <-> ')})`;
}

/** The same query as `sanitizeFtsQuery`, as PostgreSQL `to_tsquery` text ('' when nothing is searchable). */
export function tsQueryOf(query: string): string {
  const out: string[] = [];
  let pending: Operator | null = null;
  for (const item of joinItems(parseQuery(query))) {
    if (item.kind === 'op') {
      pending = item.op;
      continue;
    }
    const term = tsTerm(item.text);
    if (term === null) continue;
    if (out.length > 0) out.push(TS_OPERATORS[pending ?? 'AND']);
    out.push(term);
    pending = null;
  }
  return out.join(' ');
}
