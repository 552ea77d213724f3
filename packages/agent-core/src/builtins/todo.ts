/**
 * The `todo` tool: a task list per session that the model keeps while working through something with several
 * steps, and that /status shows the user (`getTodos`). Items are numbered per session and keep their number.
 */
// Registers the tool tables' migrations: a store opened after this import has them.
import './tables.js';
import type { SessionStore } from '../store/session-store.js';
import type { Sql } from '../store/sql.js';
import type { Tool } from '../tools/registry.js';
import { ToolInputError, optionalIntArg, optionalStringArg, sessionIdOf } from './context.js';

export const TODO_TOOL = 'todo';
export const TODO_STATUSES = ['pending', 'in_progress', 'done'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];
const MAX_TODO_ITEMS = 50;
const MAX_TODO_TEXT_CHARS = 500;
const ACTIONS = ['list', 'add', 'update', 'remove'] as const;
const MARKS: Record<TodoStatus, string> = { pending: '[ ]', in_progress: '[~]', done: '[x]' };

export interface TodoItem {
  id: number;
  text: string;
  status: TodoStatus;
}

interface TodoRow {
  item_id: number;
  content: string;
  status: TodoStatus;
}

/** The session's todo list, in order (for /status). */
export async function getTodos(store: SessionStore, sessionId: string): Promise<TodoItem[]> {
  return selectTodos(store.sql, await listOwner(store, sessionId));
}

/**
 * The session a conversation's list is kept under: the first session of its compression chain. Compression
 * moves a conversation to a child session, and its task list must not be left behind with the old one.
 */
async function listOwner(store: SessionStore, sessionId: string): Promise<string> {
  const chain = await store.ancestry(sessionId);
  let owner = sessionId;
  for (const parent of chain.slice(1)) {
    if (parent.endReason !== 'compression') break;
    owner = parent.id;
  }
  return owner;
}

/** The list as the model and the user see it. */
export function formatTodos(items: readonly TodoItem[]): string {
  if (items.length === 0) return 'The todo list is empty.';
  const done = items.filter((i) => i.status === 'done').length;
  const lines = items.map((i) => `${MARKS[i.status]} ${i.id}. ${i.text}${i.status === 'in_progress' ? ' (in progress)' : ''}`);
  return [`Todo list (${done} of ${items.length} done):`, ...lines].join('\n');
}

async function selectTodos(sql: Sql, sessionId: string): Promise<TodoItem[]> {
  const rows = await sql.all<TodoRow>('SELECT item_id, content, status FROM tool_todos WHERE session_id = ? ORDER BY item_id', [sessionId]);
  return rows.map((r) => ({ id: r.item_id, text: r.content, status: r.status }));
}

export function createTodoTool(store: SessionStore): Tool {
  const sql = store.sql;
  return {
    name: TODO_TOOL,
    description:
      'Your task list for this conversation. Use it for work with three or more steps: add the steps, mark ' +
      'one in_progress while you work on it and done when finished, so you and the user can see where things ' +
      'stand. Actions: list; add (text, or texts for several); update (id, and status and/or text); remove (id). ' +
      'Every action returns the whole list.',
    parameters: {
      type: 'object',
      properties: {
        action: { type: 'string', enum: [...ACTIONS] },
        text: { type: 'string', description: 'Item text (add, update)' },
        texts: { type: 'array', items: { type: 'string' }, description: 'Several items to add at once' },
        id: { type: 'integer', description: 'Item number (update, remove)' },
        status: { type: 'string', enum: [...TODO_STATUSES] },
      },
      required: ['action'],
    },
    readOnly: false,
    async execute(args, ctx) {
      const current = sessionIdOf(ctx);
      if (!current) throw new Error('no session is known for this conversation');
      const sessionId = await listOwner(store, current);
      const action = args.action;
      if (action === 'list') return formatTodos(await selectTodos(sql, sessionId));
      if (action === 'add') return formatTodos(await add(sql, sessionId, textsToAdd(args)));
      if (action === 'update') return formatTodos(await update(sql, sessionId, args));
      if (action === 'remove') return formatTodos(await remove(sql, sessionId, requireId(args)));
      throw new ToolInputError(`"action" must be one of ${ACTIONS.join(', ')}`);
    },
  };
}

function cleanText(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  if (t === '') throw new ToolInputError('an item text is empty');
  if (t.length > MAX_TODO_TEXT_CHARS) throw new ToolInputError(`an item text is longer than ${MAX_TODO_TEXT_CHARS} characters`);
  return t;
}

function textsToAdd(args: Record<string, unknown>): string[] {
  const many = args.texts;
  if (Array.isArray(many) && many.length > 0) {
    if (!many.every((t): t is string => typeof t === 'string')) throw new ToolInputError('"texts" must be a list of strings');
    return many.map(cleanText);
  }
  const one = optionalStringArg(args, 'text');
  if (one === undefined) throw new ToolInputError('"text" (or "texts") is required to add items');
  return [cleanText(one)];
}

function requireId(args: Record<string, unknown>): number {
  const id = optionalIntArg(args, 'id');
  if (id === undefined) throw new ToolInputError('"id" (the item number) is required');
  return id;
}

function statusArg(args: Record<string, unknown>): TodoStatus | undefined {
  const s = optionalStringArg(args, 'status');
  if (s === undefined) return undefined;
  if (!(TODO_STATUSES as readonly string[]).includes(s)) throw new ToolInputError(`"status" must be one of ${TODO_STATUSES.join(', ')}`);
  return s as TodoStatus;
}

/** A list edit: read, check and write in one transaction, serialised per list across processes. */
function editList(sql: Sql, sessionId: string, change: (current: TodoItem[]) => Promise<void>): Promise<TodoItem[]> {
  return sql.transaction(async () => {
    await sql.lock(`todo:${sessionId}`);
    await change(await selectTodos(sql, sessionId));
    return selectTodos(sql, sessionId);
  });
}

function add(sql: Sql, sessionId: string, texts: string[]): Promise<TodoItem[]> {
  return editList(sql, sessionId, async (current) => {
    if (current.length + texts.length > MAX_TODO_ITEMS) {
      throw new ToolInputError(`the list can hold ${MAX_TODO_ITEMS} items; remove finished ones first`);
    }
    let next = current.reduce((max, i) => Math.max(max, i.id), 0);
    const now = Date.now();
    for (const text of texts) {
      await sql.run('INSERT INTO tool_todos (session_id, item_id, content, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)', [
        sessionId,
        ++next,
        text,
        'pending',
        now,
        now,
      ]);
    }
  });
}

function update(sql: Sql, sessionId: string, args: Record<string, unknown>): Promise<TodoItem[]> {
  const id = requireId(args);
  const status = statusArg(args);
  const rawText = optionalStringArg(args, 'text');
  const text = rawText === undefined ? undefined : cleanText(rawText);
  if (status === undefined && text === undefined) throw new ToolInputError('give a new "status" and/or "text" to update');
  return editList(sql, sessionId, async (current) => {
    const item = current.find((i) => i.id === id);
    if (!item) throw new ToolInputError(`there is no item ${id}`);
    await sql.run('UPDATE tool_todos SET content = ?, status = ?, updated_at = ? WHERE session_id = ? AND item_id = ?', [
      text ?? item.text,
      status ?? item.status,
      Date.now(),
      sessionId,
      id,
    ]);
  });
}

function remove(sql: Sql, sessionId: string, id: number): Promise<TodoItem[]> {
  return editList(sql, sessionId, async () => {
    const res = await sql.run('DELETE FROM tool_todos WHERE session_id = ? AND item_id = ?', [sessionId, id]);
    if (res.changes === 0) throw new ToolInputError(`there is no item ${id}`);
  });
}
