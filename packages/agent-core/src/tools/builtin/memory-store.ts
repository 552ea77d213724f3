/**
 * Persistent notes per user, in two parts like Hermes' MEMORY.md and USER.md: `memory` (facts about the work:
 * environment, conventions, lessons) and `user` (facts about the person: name, preferences, habits). Each part
 * has a character budget, so the block injected into the conversation stays small; an edit that would exceed it
 * fails with a message telling the model what to do instead. Check and write happen in one transaction, so two
 * sessions of the same user on different workers cannot overfill a part together.
 */
// Registers the tool tables' migrations: a store opened after this import has them.
import './tables.js';
import type { SessionStore } from '../../store/session-store.js';
import type { StoreDb } from '../../store/db.js';

export type MemoryTarget = 'memory' | 'user';
export const MEMORY_TARGETS: readonly MemoryTarget[] = ['memory', 'user'];

/** Hermes' limits: about 800 and 500 tokens. */
export const MEMORY_CHAR_LIMITS: Readonly<Record<MemoryTarget, number>> = { memory: 2_200, user: 1_375 };
/** How entries are joined when shown (and counted against the limit). */
export const ENTRY_SEPARATOR = '\n§\n';
/** The block's own tags may not appear inside an entry, or an entry could end the block early. */
const FORBIDDEN_IN_ENTRY = /<\/?memory>/i;

export class MemoryEditError extends Error {
  override name = 'MemoryEditError';
}

export interface MemoryEntry {
  id: number;
  content: string;
}

export type MemorySnapshot = Record<MemoryTarget, string[]>;

interface EntryRow {
  id: number;
  content: string;
}

/** Characters a list of entries takes when shown. */
export function memoryChars(entries: readonly string[]): number {
  return entries.join(ENTRY_SEPARATOR).length;
}

export class MemoryStore {
  private readonly db: StoreDb;

  constructor(store: SessionStore) {
    this.db = store.database;
  }

  entries(userKey: string, target: MemoryTarget): MemoryEntry[] {
    return this.db.read(() => this.select(userKey, target));
  }

  snapshot(userKey: string): MemorySnapshot {
    return this.db.read(() => ({
      memory: this.select(userKey, 'memory').map((e) => e.content),
      user: this.select(userKey, 'user').map((e) => e.content),
    }));
  }

  /** Adds an entry; an identical entry already saved is left as it is. Returns the part's entries afterwards. */
  add(userKey: string, target: MemoryTarget, content: string): MemoryEntry[] {
    const text = cleanEntry(content);
    return this.db.write(() => {
      const current = this.select(userKey, target);
      if (current.some((e) => e.content === text)) return current;
      assertFits(target, [...current.map((e) => e.content), text]);
      const now = Date.now();
      this.db
        .prepare('INSERT INTO tool_memory (user_key, target, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
        .run(userKey, target, text, now, now);
      return this.select(userKey, target);
    });
  }

  /** Replaces the one entry containing `oldText` with `content`. */
  replace(userKey: string, target: MemoryTarget, oldText: string, content: string): MemoryEntry[] {
    const text = cleanEntry(content);
    return this.db.write(() => {
      const current = this.select(userKey, target);
      const hit = findOne(current, oldText, target);
      assertFits(target, current.map((e) => (e.id === hit.id ? text : e.content)));
      this.db.prepare('UPDATE tool_memory SET content = ?, updated_at = ? WHERE id = ?').run(text, Date.now(), hit.id);
      return this.select(userKey, target);
    });
  }

  /** Removes the one entry containing `oldText`. */
  remove(userKey: string, target: MemoryTarget, oldText: string): MemoryEntry[] {
    return this.db.write(() => {
      const hit = findOne(this.select(userKey, target), oldText, target);
      this.db.prepare('DELETE FROM tool_memory WHERE id = ?').run(hit.id);
      return this.select(userKey, target);
    });
  }

  private select(userKey: string, target: MemoryTarget): MemoryEntry[] {
    return this.db
      .prepare('SELECT id, content FROM tool_memory WHERE user_key = ? AND target = ? ORDER BY id')
      .all(userKey, target) as EntryRow[];
  }
}

function cleanEntry(content: string): string {
  const text = content.trim();
  if (text === '') throw new MemoryEditError('the entry is empty');
  if (FORBIDDEN_IN_ENTRY.test(text)) throw new MemoryEditError('an entry may not contain <memory> tags');
  return text;
}

function assertFits(target: MemoryTarget, entries: readonly string[]): void {
  const used = memoryChars(entries);
  const limit = MEMORY_CHAR_LIMITS[target];
  if (used <= limit) return;
  throw new MemoryEditError(
    `${target} would hold ${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} characters. ` +
      'Nothing was saved: make the entry shorter, or first replace or remove entries that matter less ' +
      '(merge related entries into one).',
  );
}

/** The entry `oldText` identifies: exactly one must contain it (case-insensitively if no exact match). */
function findOne(entries: readonly MemoryEntry[], oldText: string, target: MemoryTarget): MemoryEntry {
  const needle = oldText.trim();
  if (needle === '') throw new MemoryEditError('old_text is required to say which entry to change');
  let hits = entries.filter((e) => e.content.includes(needle));
  if (hits.length === 0) hits = entries.filter((e) => e.content.toLowerCase().includes(needle.toLowerCase()));
  if (hits.length === 1) return hits[0];
  if (hits.length === 0) throw new MemoryEditError(`no ${target} entry contains "${needle}"`);
  throw new MemoryEditError(`"${needle}" appears in ${hits.length} ${target} entries; quote more of the one you mean`);
}
