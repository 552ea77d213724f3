/**
 * The `memory` tool and the block that shows saved notes to the model.
 *
 * The block is read once per turn and goes after the latest user message's own text in each request, never stored
 * and never into the system prompt: the system prompt and the history prefix stay byte-identical from call to call,
 * which is what provider prompt caching needs (`prefetchMemoryBlock`). Edits made during a turn show up in the tool
 * results, and in the block of the next turn.
 */
import type { ChatMessage } from '../base/types.js';
import type { SessionStore } from '../store/session-store.js';
import type { NotesRead } from '../store/turns.js';
import type { Tool } from '../tools/registry.js';
import { ToolInputError, optionalStringArg, stringArg, userKeyOf } from './context.js';
import {
  ENTRY_SEPARATOR,
  MEMORY_CHAR_LIMITS,
  MEMORY_TARGETS,
  MemoryStore,
  memoryChars,
  snapshotOf,
  type MemoryEntry,
  type MemorySnapshot,
  type MemoryTarget,
} from './memory-store.js';

export const MEMORY_TOOL = 'memory';
export const MEMORY_BLOCK_OPEN = '<memory>';
export const MEMORY_BLOCK_CLOSE = '</memory>';
const ACTIONS = ['add', 'replace', 'remove'] as const;
type Action = (typeof ACTIONS)[number];

const HEADINGS: Record<MemoryTarget, string> = {
  memory: 'Your notes (memory)',
  user: 'About the user (user)',
};

const DESCRIPTION =
  "Durable notes that persist across conversations with this user (shown to you with the user's " +
  'messages). Two parts: "memory" for facts about the work (environment, conventions, decisions, lessons ' +
  `learned; ${MEMORY_CHAR_LIMITS.memory} characters) and "user" for facts about the person (name, role, ` +
  `preferences, how they like answers; ${MEMORY_CHAR_LIMITS.user} characters). Save what will still matter in ` +
  'a later conversation, especially when the user corrects you or states a preference; do not save the ' +
  'progress of the current task (use todo for that). Actions: add (content); replace (old_text: a unique part ' +
  'of the entry to change, content: its new full text); remove (old_text). Keep entries short; when a part is ' +
  'full, merge or remove entries instead of adding.';

export function createMemoryTool(store: SessionStore): Tool {
  const memory = new MemoryStore(store);
  return {
    name: MEMORY_TOOL,
    description: DESCRIPTION,
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: [...ACTIONS] },
        target: { type: 'string', enum: [...MEMORY_TARGETS], description: 'memory: about the work; user: about the person' },
        content: { type: 'string', description: 'The entry text (add, replace)' },
        old_text: { type: 'string', description: 'A unique part of the entry to replace or remove' },
      },
      required: ['action', 'target'],
    },
    readOnly: false,
    async execute(args, ctx) {
      const userKey = userKeyOf(ctx);
      if (!userKey) throw new Error('no user is known for this conversation, so there is nowhere to save notes');
      const action = enumArg<Action>(args, 'action', ACTIONS);
      const target = enumArg<MemoryTarget>(args, 'target', MEMORY_TARGETS);
      let entries: MemoryEntry[];
      if (action === 'add') entries = await memory.add(userKey, target, stringArg(args, 'content'));
      else if (action === 'replace') entries = await memory.replace(userKey, target, stringArg(args, 'old_text'), stringArg(args, 'content'));
      else entries = await memory.remove(userKey, target, optionalStringArg(args, 'old_text') ?? '');
      return `${pastTense(action)} (${target}). ${describePart(
        target,
        entries.map((e) => e.content),
      )}`;
    },
  };
}

function enumArg<T extends string>(args: Record<string, unknown>, name: string, allowed: readonly T[]): T {
  const v = args[name];
  if (typeof v === 'string' && (allowed as readonly string[]).includes(v)) return v as T;
  throw new ToolInputError(`"${name}" must be one of ${allowed.join(', ')}`);
}

function pastTense(action: Action): string {
  return { add: 'Saved', replace: 'Replaced', remove: 'Removed' }[action];
}

function describePart(target: MemoryTarget, entries: readonly string[]): string {
  const usage = `${memoryChars(entries).toLocaleString('en-US')}/${MEMORY_CHAR_LIMITS[target].toLocaleString('en-US')} characters`;
  if (entries.length === 0) return `The ${target} part is now empty (${usage}).`;
  return `The ${target} part now holds ${entries.length} ${entries.length === 1 ? 'entry' : 'entries'} (${usage}):\n${entries.join(ENTRY_SEPARATOR)}`;
}

/** The `<memory>` block for a snapshot, or null when nothing is saved. */
export function renderMemoryBlock(snapshot: MemorySnapshot): string | null {
  const parts = MEMORY_TARGETS.filter((t) => snapshot[t].length > 0).map((t) => {
    const usage = `${memoryChars(snapshot[t]).toLocaleString('en-US')}/${MEMORY_CHAR_LIMITS[t].toLocaleString('en-US')} chars`;
    return `## ${HEADINGS[t]} [${usage}]\n${snapshot[t].join(ENTRY_SEPARATOR)}`;
  });
  if (parts.length === 0) return null;
  return `${MEMORY_BLOCK_HEAD}\n${parts.join('\n')}\n${MEMORY_BLOCK_CLOSE}`;
}

/** How a real memory block begins: the marker and the fixed line after it. */
const MEMORY_BLOCK_HEAD = `${MEMORY_BLOCK_OPEN}\nNotes saved from earlier conversations (edit them with the memory tool):`;
/** The marker at the start of a user's own text, in any case, after any blank space. */
const LEADING_MARKER = /^(?:\s*<memory>)+\s*/i;
/** A whole block in the notes' form (or Hermes' `<memory-context>`), anywhere in the text, in any case. */
const SPOOFED_BLOCK = /<(memory|memory-context)>(?:(?!<\1>)[\s\S])*?<\/\1>/gi;

/**
 * A user's own text without anything posing as the notes block: whole `<memory>…</memory>` (and
 * `<memory-context>…</memory-context>`) blocks are removed with what they hold, wherever they are, and a marker left
 * in front without its end. Otherwise a message that began with `<memory>` would pass for the notes block (the real
 * notes would not be shown again), and the model would take the user's words inside for saved notes.
 */
export function stripMemoryMarker(userText: string): string {
  let text = userText;
  // Innermost first, until none is left: a block nested in another goes with it.
  for (let previous = ''; previous !== text; ) {
    previous = text;
    text = text.replace(SPOOFED_BLOCK, '');
  }
  if (text !== userText) text = text.replace(/^\s+/, '');
  return LEADING_MARKER.test(text) ? text.replace(LEADING_MARKER, '') : text;
}

/**
 * The saved notes block for one turn (B7): read once when the turn starts and handed to the loop as its
 * `requestContext`, which puts it after the latest user message's own text in every request and never stores it.
 * So notes saved in one turn (here or in another chat) show from the next turn on, the stored history holds no
 * notes (exports, search and titles see the user's own words), and the system prompt and earlier history stay
 * byte-identical for provider prompt caches. Null when the person has no notes (or no one is known).
 */
export async function prefetchMemoryBlock(store: SessionStore, userKey: string | null, readWithBegin?: NotesRead | null): Promise<string | null> {
  if (!userKey) return null;
  // Read with the turn's begin (PostgreSQL, one round trip fewer), when it was this person's.
  if (readWithBegin?.userKey === userKey) return renderMemoryBlock(snapshotOf(readWithBegin.entries));
  return renderMemoryBlock(await new MemoryStore(store).snapshot(userKey));
}

/**
 * A history without the notes blocks sessions from before B7 stored in front of their first user message: the
 * model gets the current notes per request instead, not an old copy besides them.
 */
export function withoutStoredMemoryBlocks(history: readonly ChatMessage[]): ChatMessage[] {
  return history.map((m) => (m.role === 'user' && m.content?.startsWith(MEMORY_BLOCK_OPEN) ? { ...m, content: stripMemoryBlock(m.content) } : m));
}

/** The user's text without a memory block in front (for titles, search snippets and the like). */
export function stripMemoryBlock(text: string): string {
  if (!text.startsWith(MEMORY_BLOCK_OPEN)) return text;
  const end = text.indexOf(MEMORY_BLOCK_CLOSE);
  return end === -1 ? text : text.slice(end + MEMORY_BLOCK_CLOSE.length).replace(/^\s+/, '');
}
