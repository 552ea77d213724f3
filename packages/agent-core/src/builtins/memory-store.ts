/**
 * Persistent notes per user, in two parts like Hermes' MEMORY.md and USER.md: `memory` (facts about the work:
 * environment, conventions, lessons) and `user` (facts about the person: name, preferences, habits). Each part
 * has a character budget, so the block injected into the conversation stays small; an edit that would exceed it
 * fails with a message telling the model what to do instead. Check and write happen in one transaction, so two
 * sessions of the same user on different workers cannot overfill a part together.
 */
// Registers the tool tables' migrations: a store opened after this import has them.
import './tables.js';
import type { SessionStore } from '../store/session-store.js';
import type { Sql } from '../store/sql.js';

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

/** The two parts from [target, content] pairs in the table's order: a read of its own, or one made with a turn's begin (store/turns.ts). */
export function snapshotOf(entries: ReadonlyArray<readonly [string, string]>): MemorySnapshot {
  const snapshot: MemorySnapshot = { memory: [], user: [] };
  for (const [target, content] of entries) if (target === 'memory' || target === 'user') snapshot[target].push(content);
  return snapshot;
}

export class MemoryStore {
  private readonly sql: Sql;

  constructor(store: SessionStore) {
    this.sql = store.sql;
  }

  entries(userKey: string, target: MemoryTarget): Promise<MemoryEntry[]> {
    return this.select(userKey, target);
  }

  async snapshot(userKey: string): Promise<MemorySnapshot> {
    const rows = await this.sql.all<EntryRow & { target: MemoryTarget }>(
      // In the index's order (user_key, target, id): each part comes out oldest first without a sort.
      'SELECT id, target, content FROM tool_memory WHERE user_key = ? ORDER BY target, id',
      [userKey],
    );
    return snapshotOf(rows.map((r) => [r.target, r.content]));
  }

  /** Adds an entry; an identical entry already saved is left as it is. Returns the part's entries afterwards. */
  add(userKey: string, target: MemoryTarget, content: string): Promise<MemoryEntry[]> {
    const text = cleanEntry(content);
    return this.edit(userKey, target, async (current) => {
      if (current.some((e) => e.content === text)) return;
      assertFits(target, [...current.map((e) => e.content), text]);
      const now = Date.now();
      await this.sql.run('INSERT INTO tool_memory (user_key, target, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?)', [
        userKey,
        target,
        text,
        now,
        now,
      ]);
    });
  }

  /** Replaces the one entry containing `oldText` with `content`. */
  replace(userKey: string, target: MemoryTarget, oldText: string, content: string): Promise<MemoryEntry[]> {
    const text = cleanEntry(content);
    return this.edit(userKey, target, async (current) => {
      const hit = findOne(current, oldText, target);
      assertFits(
        target,
        current.map((e) => (e.id === hit.id ? text : e.content)),
      );
      await this.sql.run('UPDATE tool_memory SET content = ?, updated_at = ? WHERE id = ?', [text, Date.now(), hit.id]);
    });
  }

  /** Removes the one entry containing `oldText`. */
  remove(userKey: string, target: MemoryTarget, oldText: string): Promise<MemoryEntry[]> {
    return this.edit(userKey, target, async (current) => {
      const hit = findOne(current, oldText, target);
      await this.sql.run('DELETE FROM tool_memory WHERE id = ?', [hit.id]);
    });
  }

  /** Check and write in one transaction, serialised per user and part across processes. */
  private edit(userKey: string, target: MemoryTarget, change: (current: MemoryEntry[]) => Promise<void>): Promise<MemoryEntry[]> {
    return this.sql.transaction(async () => {
      await this.sql.lock(`memory:${userKey}:${target}`);
      await change(await this.select(userKey, target));
      return this.select(userKey, target);
    });
  }

  private select(userKey: string, target: MemoryTarget): Promise<MemoryEntry[]> {
    return this.sql.all<EntryRow>('SELECT id, content FROM tool_memory WHERE user_key = ? AND target = ? ORDER BY id', [userKey, target]);
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
