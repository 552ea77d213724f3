/**
 * The agent's knowledge, from the chat: `/personality [name]` lists the presets or switches this conversation to
 * one, `/skills [name]` lists the skills of the conversation's profile or shows one, `/prompt` shows how the
 * session's system prompt was built (its layers) and the prompt itself (features/prompt, features/skills).
 *
 * A switch of personality is a new system prompt, so it starts a new session segment, as compression does: the
 * current session ends (reason `personality`) and a child (parent_session_id) takes over its transcript with the
 * new prompt; the provider's prompt cache starts again from there.
 */
import { NO_PERSONALITY } from '../../features/prompt/personalities.js';
import { withSessionHeld } from '../../features/sessions/session-hold.js';
import { openSession, sessionInit, type CommandDeps, type CommandInput } from './context.js';
import { BUSY_REPLY } from './registry.js';

const PERSONALITY_END_REASON = 'personality';
const NO_MODEL = 'No model is configured for this profile, so there is no system prompt yet.';

export async function personalityCommand(deps: CommandDeps, { command, msg, sessionKey, profile }: CommandInput): Promise<string> {
  const { prompts } = deps.conversation;
  const arg = command.args.trim().toLowerCase();
  const current = await openSession(deps, sessionKey);
  const record = current ? await prompts.recordFor(deps.store, current) : null;
  const active = record ? (record.personality ?? NO_PERSONALITY) : (profile.personality ?? NO_PERSONALITY);
  if (arg === '') {
    const names = prompts.personalities.names();
    return [
      `Personality of this conversation: ${active}${profile.personality ? ` (profile default: ${profile.personality})` : ''}`,
      `Available: ${[...names, NO_PERSONALITY].join(', ')}`,
      'Switch with /personality <name>; /new goes back to the default.',
    ].join('\n');
  }
  if (arg !== NO_PERSONALITY && !prompts.personalities.has(arg)) return `No personality "${arg}". /personality lists them.`;
  if (!profile.model) return NO_MODEL;
  if (arg === active && current) return `Already ${arg}.`;
  const built = await prompts.buildFor(profile, msg.platform, msg.chatType, arg);
  // A new segment takes the transcript over: hold the session so no turn runs on it meanwhile.
  const held = await withSessionHeld(deps.mailbox, sessionKey, 'command:personality', async () => {
    const history = current ? await deps.store.getHistory(current.id) : [];
    await deps.store.transaction(async () => {
      const next = await deps.store.startNewSession(sessionKey, {
        ...sessionInit(msg, profile),
        model: current?.model ?? profile.model,
        systemPrompt: built.text,
        prompt: built,
        ...(current ? { parentSessionId: current.id, endPreviousReason: PERSONALITY_END_REASON } : {}),
        ...(current?.title ? { title: await deps.store.nextLineageTitle(current.title) } : {}),
      });
      if (history.length > 0) await deps.store.appendMessages(next.id, history);
    });
  });
  if (!held.held) return BUSY_REPLY;
  const warn = built.warnings.length > 0 ? `\n⚠️ ${built.warnings.join('\n⚠️ ')}` : '';
  return `🎭 Personality: ${arg}. The conversation continues with the new system prompt.${warn}`;
}

export async function skillsCommand(deps: CommandDeps, { command, profile }: CommandInput): Promise<string> {
  const { skills } = deps.conversation;
  const save = saveArgs(command.args);
  if (save) return saveSkill(deps, profile, save);
  const owner = { name: profile.name, skillsDir: profile.skillsDir, skillManage: profile.skillManage, reviewWrites: profile.review.enabled };
  if (!skills.offeredTo(owner)) return `No skills for profile ${profile.name}: set HERALD_SKILLS_DIR (or the profile's skills_dir), or allow skill_manage.`;
  const name = command.args.trim();
  if (name !== '') {
    try {
      return `📘 ${name}\n\n${await skills.view(owner, name)}`;
    } catch (err) {
      return `⚠️ ${(err as Error).message}`;
    }
  }
  const index = await skills.index(owner);
  if (index.length === 0) return `No skills yet for profile ${profile.name}.${profile.skillManage ? ' The agent may write some (skill_manage).' : ''}`;
  return [`Skills of profile ${profile.name} (/skills <name> shows one):`, ...index.map((s) => `• ${s.name} — ${s.description} [${s.source}]`)].join('\n');
}

/** `save <name>` and the skill's text on the lines after it (what an offered skill's button stands for). */
function saveArgs(args: string): { name: string; content: string } | null {
  const match = /^save[ \t]+(\S+)[ \t]*\n([\s\S]+)$/.exec(args.trimStart());
  return match ? { name: match[1], content: match[2] } : null;
}

/**
 * Writes a skill the user accepted (or typed) into the profile's own skills in the store. Allowed where the agent may
 * write skills (skill_manage) or the review after a turn proposes them; the same checks as skill_manage apply.
 */
async function saveSkill(deps: CommandDeps, profile: CommandInput['profile'], save: { name: string; content: string }): Promise<string> {
  if (!profile.skillManage && !profile.review.enabled) return `Profile ${profile.name} keeps no skills of its own (skill_manage and the review are off).`;
  try {
    const { created } = await deps.conversation.skills.writeSkill(profile.name, save.name, save.content);
    return `📚 Skill "${save.name}" ${created ? 'saved' : 'updated'}.`;
  } catch (err) {
    return `⚠️ Skill not saved: ${(err as Error).message}`;
  }
}

export async function promptCommand(deps: CommandDeps, { sessionKey }: CommandInput): Promise<string> {
  const session = await openSession(deps, sessionKey);
  if (!session?.systemPrompt) return 'No system prompt yet — it is built when the conversation starts (send a message).';
  const record = await deps.conversation.prompts.recordFor(deps.store, session);
  const layers = record
    ? record.layers.map((l) => `• ${l.name} — ${l.chars} chars${l.detail ? ` (${l.detail})` : ''}`)
    : ['• (built before the prompt builder: one layer)'];
  return [`System prompt of this conversation (personality ${record?.personality ?? NO_PERSONALITY}):`, ...layers, '', session.systemPrompt].join('\n');
}
