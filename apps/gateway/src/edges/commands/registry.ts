/**
 * The command table: one place drives dispatch, /help, Telegram's command menu and Slack's `/herald <sub>`.
 * Every registered command is answered at once by the ingress and never queued as text; anything else that
 * starts with a slash (an unknown command, a path like /tmp/x) is an ordinary message.
 */
import { SLACK_SLASH_COMMAND } from '@herald/adapters/slack';

export type CommandName =
  | 'help'
  | 'new'
  | 'stop'
  | 'status'
  | 'usage'
  | 'queue'
  | 'retry'
  | 'undo'
  | 'compress'
  | 'title'
  | 'resume'
  | 'model'
  | 'schedules'
  | 'voice'
  | 'reasoning'
  | 'remember'
  | 'personality'
  | 'skills'
  | 'prompt'
  | 'approve'
  | 'deny';

export interface CommandSpec {
  name: CommandName;
  aliases: readonly string[];
  description: string;
  /** Shown in /help, e.g. `<text>` or `[name]`. */
  args?: string;
  /**
   * True: runs while a turn is running (reads state, or stops the turn itself). False: it rewrites the session
   * a running turn is using, so while busy it answers BUSY_REPLY instead of racing the turn.
   */
  bypassesBusy: boolean;
  /**
   * True when the command's effect is a queued message (a turn of its own): a platform that acknowledges arrivals
   * (Slack's slash commands) acknowledges it only once that message was handed over, like a typed message.
   */
  queues?: true;
}

export const BUSY_REPLY = '⏳ Busy — a task is running. Send /stop first (or wait for the answer).';

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'help', aliases: [], description: 'List the commands', bypassesBusy: true },
  { name: 'new', aliases: ['reset'], description: 'Start a new conversation (stops a running task)', bypassesBusy: true },
  { name: 'stop', aliases: [], description: 'Stop the running task and drop queued messages', bypassesBusy: true },
  { name: 'status', aliases: [], description: 'Show the session and whether a task is running', bypassesBusy: true },
  { name: 'usage', aliases: [], description: 'Tokens, API calls and how full the context is', bypassesBusy: true },
  { name: 'queue', aliases: [], description: 'Queue a message for after the running task', args: '<text>', bypassesBusy: true, queues: true },
  { name: 'retry', aliases: [], description: 'Ask your last message again', bypassesBusy: false, queues: true },
  { name: 'undo', aliases: [], description: 'Remove your last message and its answer', bypassesBusy: false },
  { name: 'compress', aliases: [], description: 'Summarise the conversation now to free context', bypassesBusy: false },
  { name: 'title', aliases: [], description: 'Show or set the title of this conversation', args: '[name]', bypassesBusy: true },
  { name: 'resume', aliases: [], description: 'List titled conversations, or continue one', args: '[name]', bypassesBusy: false },
  { name: 'model', aliases: [], description: 'Show or change the model of this conversation', args: '[provider:model]', bypassesBusy: true },
  { name: 'schedules', aliases: [], description: 'List your scheduled tasks, or cancel one', args: '[cancel <id>]', bypassesBusy: true },
  { name: 'voice', aliases: [], description: 'Voice replies in this conversation: on or off', args: '[on|off]', bypassesBusy: true },
  { name: 'reasoning', aliases: [], description: "Show the model's reasoning above its answers: on or off", args: '[on|off]', bypassesBusy: true },
  { name: 'remember', aliases: [], description: 'Save a note for later conversations', args: '[user] <note>', bypassesBusy: true },
  { name: 'personality', aliases: [], description: 'List the personalities, or switch this conversation to one', args: '[name]', bypassesBusy: false },
  { name: 'skills', aliases: [], description: "List the agent's skills, show one, or save one", args: '[name | save <name> + text]', bypassesBusy: true },
  { name: 'prompt', aliases: [], description: "Show this conversation's system prompt and its layers", bypassesBusy: true },
  { name: 'approve', aliases: [], description: 'Let the tool waiting for approval run (always: for this session)', args: '[always]', bypassesBusy: true },
  { name: 'deny', aliases: [], description: 'Refuse the tool waiting for approval', bypassesBusy: true },
];

const BY_NAME = new Map<string, CommandSpec>();
for (const c of COMMANDS) for (const n of [c.name, ...c.aliases]) BY_NAME.set(n, c);

export interface ParsedCommand {
  spec: CommandSpec;
  args: string;
}

/**
 * `/name args`, `/name@bot args` → the command; null for text that is not a registered command.
 * A command word is letters, digits and underscores only, so `/tmp/x` never matches.
 */
export function parseCommand(text: string): ParsedCommand | null {
  // Most messages are no command: text that does not start with a slash is not matched at all.
  if (!text.trimStart().startsWith('/')) return null;
  const m = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  const spec = BY_NAME.get(m[1].toLowerCase());
  return spec ? { spec, args: (m[2] ?? '').trim() } : null;
}

export function helpText(): string {
  const line = (c: CommandSpec): string =>
    `/${c.name}${c.args ? ` ${c.args}` : ''} — ${c.description}${c.aliases.length ? ` (also /${c.aliases.join(', /')})` : ''}`;
  return ['Commands:', ...COMMANDS.map(line), `On Slack: ${SLACK_SLASH_COMMAND} <command>, e.g. ${SLACK_SLASH_COMMAND} status.`].join('\n');
}

/**
 * For Telegram's setMyCommands menu, Discord's application commands (which also take the aliases and args) and
 * Slack's slash commands (which also take `queues`).
 */
export function menuCommands(): Array<{ name: string; description: string; args?: string; aliases: readonly string[]; queues?: true }> {
  return COMMANDS.map((c) => ({
    name: c.name,
    description: c.description,
    aliases: c.aliases,
    ...(c.args && { args: c.args }),
    ...(c.queues && { queues: c.queues }),
  }));
}
