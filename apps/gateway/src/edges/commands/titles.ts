/**
 * /title names a conversation; /resume lists the titled conversations of this platform or continues one.
 *
 * Resuming moves this chat's session key to a new session that continues the latest session of the title's
 * lineage (parent_session_id points at it; titled `name #N` as compression does) with its transcript; the
 * session this chat had is ended ('resumed') and keeps its own transcript.
 */
import { TitleInUseError, type Session, type SessionSource } from '@herald/agent-core';
import { openSession, profileColumn, sessionInit, sessionOrStart, type CommandDeps, type CommandInput, type CommandReply } from './context.js';
import { ago } from './format.js';
import { BUSY_REPLY } from './registry.js';
import { withSessionHeld } from '../../features/sessions/session-hold.js';

const RESUME_LIST_SIZE = 10;
/** Sessions fetched to fill the list: one lineage may hold several sessions with the same title. */
const RESUME_SCAN = 100;
const LINEAGE_SUFFIX = / #\d+$/;

export async function titleCommand(deps: CommandDeps, { command, msg, sessionKey, profile }: CommandInput): Promise<string> {
  const current = await openSession(deps, sessionKey);
  if (!command.args) {
    return current?.title
      ? `This conversation is titled “${current.title}”.`
      : 'This conversation has no title. Set one with /title <name>; /resume <name> brings it back later.';
  }
  const session = current ?? (await sessionOrStart(deps, sessionKey, msg, profile));
  try {
    const stored = await deps.store.setTitle(session.id, command.args);
    return stored === null ? 'That title is empty once cleaned up; try another.' : `🏷 Titled “${stored}”.`;
  } catch (err) {
    if (err instanceof TitleInUseError) return 'Another conversation already has that title; pick another.';
    throw err;
  }
}

export async function resumeCommand(deps: CommandDeps, { command, msg, sessionKey, profile }: CommandInput): Promise<CommandReply> {
  const source = msg.platform as SessionSource;
  if (!command.args) return await listTitled(deps, source, msg.userId);

  const target = await resolveTitleOn(deps, source, msg.userId, command.args);
  // Another profile's conversation is not this agent's to continue (its notes and transcripts stay apart).
  if (!target || target.profile !== profileColumn(profile.name)) return `No conversation titled “${command.args}”. Send /resume to list them.`;
  const current = await openSession(deps, sessionKey);
  if (current?.id === target.id) return `Already in “${target.title}”.`;

  // Resuming moves the key to a new session: hold the session so no turn runs on it meanwhile.
  const held = await withSessionHeld(deps.mailbox, sessionKey, 'command:resume', async () => {
    const history = await deps.store.getHistory(target.id);
    // One transaction: the key never points at a resumed session without its transcript.
    await deps.store.transaction(async () => {
      const resumed = await deps.store.startNewSession(sessionKey, {
        ...sessionInit(msg, profile),
        model: target.model ?? undefined,
        systemPrompt: target.systemPrompt ?? undefined,
        parentSessionId: target.id,
        // Its place in the lineage, as compression names it: `name #2`, `name #3`, ...
        title: target.title ? await deps.store.nextLineageTitle(target.title) : undefined,
        endPreviousReason: 'resumed',
      });
      if (history.length > 0) await deps.store.appendMessages(resumed.id, history);
    });
    return history.length;
  });
  if (!held.held) return BUSY_REPLY;
  const count = held.value;
  return `▶️ Resumed “${target.title}” (${count} message${count === 1 ? '' : 's'}).`;
}

/**
 * The latest session of the title's lineage on this platform; an exact title first, else any letter case.
 * Only the user's own conversations: a shared bot must not let one person read another's transcript.
 */
async function resolveTitleOn(deps: CommandDeps, source: SessionSource, userId: string, title: string): Promise<Session | null> {
  const exact = await deps.store.resolveTitle(title);
  if (exact) return exact.source === source && exact.userId === userId ? exact : null;
  const wanted = title.trim().toLowerCase();
  const match = (await ownTitled(deps, source, userId)).find((s) => s.title !== null && s.title.replace(LINEAGE_SUFFIX, '').toLowerCase() === wanted);
  const latest = match?.title ? await deps.store.resolveTitle(match.title.replace(LINEAGE_SUFFIX, '')) : null;
  return latest && latest.userId === userId ? latest : null;
}

async function ownTitled(deps: CommandDeps, source: SessionSource, userId: string): Promise<Session[]> {
  return (await deps.store.listTitledSessions({ source, limit: RESUME_SCAN })).filter((s) => s.userId === userId);
}

/** The list, with a button per conversation that stands for `/resume <name>`. */
async function listTitled(deps: CommandDeps, source: SessionSource, userId: string): Promise<CommandReply> {
  const seen = new Set<string>();
  const lines: string[] = [];
  const roots: string[] = [];
  for (const s of await ownTitled(deps, source, userId)) {
    if (s.title === null) continue;
    // One line per lineage (`name`, `name #2`, ... are one conversation); /resume name finds its latest.
    const root = s.title.replace(LINEAGE_SUFFIX, '');
    if (seen.has(root)) continue;
    seen.add(root);
    roots.push(root);
    lines.push(`• ${root} — ${ago(s.startedAt)}`);
    if (lines.length === RESUME_LIST_SIZE) break;
  }
  if (lines.length === 0) return 'No titled conversations yet. Name this one with /title <name>.';
  const text = ['Titled conversations:', ...lines, 'Send /resume <name> to continue one.'].join('\n');
  return { text, choices: roots.map((root) => ({ label: root, text: `/resume ${root}` })) };
}
