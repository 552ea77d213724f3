/**
 * `herald sessions list|show|search`: the store read directly (HERALD_DATABASE_URL or HERALD_DB), so it works
 * whether or not the gateway runs. `--json` prints what the admin API would return, for scripts.
 */
import { parseArgs } from 'node:util';
import { HERALD_COMMAND } from '../support/herald-command.js';
import type { Session, SessionSource } from '@herald/agent-core';
import { openConfiguredStore, type StoreConfig } from '../features/sessions/store-target.js';
import { SOURCES, messageJson, searchHitJson, sessionJson } from '../edges/admin/schemas.js';
import { CliError, type CliIo } from './io.js';
import { exportSessions } from './sessions-export.js';

const PREVIEW_CHARS = 200;

export const SESSIONS_USAGE = `${HERALD_COMMAND} sessions list [--source telegram|discord|slack|cli|api] [--user <id>] [--active | --ended] [--limit <n>] [--cursor <c>] [--json]
${HERALD_COMMAND} sessions show <session id> [--json]
${HERALD_COMMAND} sessions search <words…> [--source <s>] [--user <id>] [--limit <n>] [--json]
${HERALD_COMMAND} sessions export --format sharegpt [--source <s>] [--since <date>] [--until <date>] [--status completed|failed|all] [--out <file>]`;

export async function sessionsCommand(args: string[], config: StoreConfig, io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      source: { type: 'string' },
      user: { type: 'string' },
      active: { type: 'boolean' },
      ended: { type: 'boolean' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      json: { type: 'boolean' },
      format: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      status: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const source = parseSource(values.source);
  const limit = values.limit === undefined ? undefined : parseLimit(values.limit);
  const store = await openConfiguredStore(config);
  try {
    switch (sub) {
      case 'list': {
        const active = values.active ? true : values.ended ? false : undefined;
        const page = await store.listSessions({ source, userId: values.user, active, cursor: values.cursor, limit });
        if (values.json) return io.json({ sessions: page.sessions.map(sessionJson), next_cursor: page.nextCursor });
        if (page.sessions.length === 0) io.out('no sessions');
        for (const s of page.sessions) io.out(sessionLine(s));
        if (page.nextCursor) io.out(`more: ${HERALD_COMMAND} sessions list --cursor ${page.nextCursor}`);
        return 0;
      }
      case 'show': {
        const id = positionals[0];
        if (!id) throw new CliError(`usage: ${HERALD_COMMAND} sessions show <session id>`);
        const session = await store.getSession(id);
        if (!session) throw new CliError(`no session ${id}`);
        const messages = await store.getMessages(session.id);
        if (values.json) return io.json({ session: sessionJson(session), messages: messages.map(messageJson) });
        io.out(sessionLine(session));
        io.out(`key ${session.key} · model ${session.model ?? 'default'} · tokens in ${session.inputTokens} / out ${session.outputTokens}`);
        for (const m of messages) {
          const text = m.content ?? (m.toolCalls ? `(calls ${m.toolCalls.map((c) => c.function.name).join(', ')})` : '');
          io.out(`[${new Date(m.createdAt).toISOString()}] ${m.role}${m.toolName ? ` ${m.toolName}` : ''}: ${text}`);
        }
        return 0;
      }
      case 'search': {
        const query = positionals.join(' ').trim();
        if (!query) throw new CliError(`usage: ${HERALD_COMMAND} sessions search <words…>`);
        const hits = await store.search(query, { source, userId: values.user, limit });
        if (values.json) return io.json({ hits: hits.map(searchHitJson) });
        if (hits.length === 0) io.out('no matches');
        for (const h of hits) io.out(`${h.sessionId}  ${h.source}  ${h.role}  ${h.snippet.replace(/\s+/g, ' ')}`);
        return 0;
      }
      case 'export':
        return await exportSessions(store, { ...values, source }, io);
      default:
        throw new CliError(`usage:\n${SESSIONS_USAGE}`);
    }
  } finally {
    await store.close();
  }
}

function sessionLine(s: Session): string {
  const state = s.endedAt === null ? 'active' : `ended ${new Date(s.endedAt).toISOString()} (${s.endReason ?? '?'})`;
  const label = s.title ?? s.key;
  const preview = label.length > PREVIEW_CHARS ? `${label.slice(0, PREVIEW_CHARS)}…` : label;
  const cost = `$${s.estimatedCostUsd.toFixed(4)}${s.actualCostUsd === null ? '' : ` (billed $${s.actualCostUsd.toFixed(4)})`}`;
  const activity = `last active ${new Date(s.lastActive).toISOString()}  ${s.totalTokens} tokens  ${cost}`;
  return `${s.id}  ${s.source}  user ${s.userId ?? '-'}  started ${new Date(s.startedAt).toISOString()}  ${state}  ${s.messageCount} msgs  ${activity}  ${preview}`;
}

function parseSource(v: string | undefined): SessionSource | undefined {
  if (v === undefined) return undefined;
  if ((SOURCES as readonly string[]).includes(v)) return v as SessionSource;
  throw new CliError(`--source: must be one of ${SOURCES.join(', ')} (got ${JSON.stringify(v)})`);
}

function parseLimit(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new CliError(`--limit: must be a whole number above 0 (got ${JSON.stringify(v)})`);
  return n;
}
