/**
 * The command table: one place drives dispatch, /help, Telegram's command menu and Slack's `/herald <sub>`.
 * Every registered command bypasses a busy session and is never queued as text; anything else that starts with
 * a slash (an unknown command, a path like /tmp/x) is an ordinary message.
 */

export interface CommandSpec {
  name: string;
  aliases: readonly string[];
  description: string;
  /** Shown in /help, e.g. `<text>` or `[name]`. */
  args?: string;
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'help', aliases: [], description: 'List the commands' },
  { name: 'new', aliases: ['reset'], description: 'Start a new conversation' },
  { name: 'stop', aliases: [], description: 'Stop the running task and drop queued messages' },
  { name: 'status', aliases: [], description: 'Show the session and whether a task is running' },
  { name: 'queue', aliases: [], description: 'Queue a message for after the running task', args: '<text>' },
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
  const m = /^\/([A-Za-z0-9_]+)(?:@[A-Za-z0-9_]+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m) return null;
  const spec = BY_NAME.get(m[1].toLowerCase());
  return spec ? { spec, args: (m[2] ?? '').trim() } : null;
}

export function helpText(): string {
  return ['Commands:', ...COMMANDS.map((c) => `/${c.name}${c.args ? ` ${c.args}` : ''} — ${c.description}${c.aliases.length ? ` (also /${c.aliases.join(', /')})` : ''}`)].join('\n');
}

/** For Telegram's setMyCommands menu. */
export function menuCommands(): Array<{ name: string; description: string }> {
  return COMMANDS.map((c) => ({ name: c.name, description: c.description }));
}
