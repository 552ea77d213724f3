/**
 * How progress is shown, per platform, as the config says: read once per process (features/sessions/services.ts) and
 * rendered by out/progress.ts.
 */
import type { Platform, StatusReactions } from '@herald/adapters';
import type { HeraldConfig } from './load.js';

export type ToolProgressMode = 'off' | 'new' | 'all';

/** 'on': the platform's own emoji (egress `statusReactions`); 'off'; or the operator's. */
type StatusReactionSetting = 'on' | 'off' | StatusReactions;

export interface ProgressSettings {
  /** The reply streams in as it is written (out/progress.ts): `<PLATFORM>_STREAMING`, else HERALD_STREAMING (default on). */
  streaming: Record<Platform, boolean>;
  /** "typing…" shows once a turn has run this long: an answer that comes sooner needs none (HERALD_TYPING_DELAY_MS). */
  typingDelayMs: number;
  /** Text the model writes before its tool calls ("Let me look that up.") is shown as a message of its own. */
  interimMessages: boolean;
  toolProgress: Record<Platform, ToolProgressMode>;
  reactions: Record<Platform, StatusReactionSetting>;
}

/**
 * A line per new tool ("⚙️ `web_fetch: https://…`"), as Hermes shows its steps; HERALD_TOOL_PROGRESS or
 * `<PLATFORM>_TOOL_PROGRESS` turn it off. WhatsApp cannot edit a message, so each line would be a message of its own.
 */
const DEFAULT_TOOL_PROGRESS: Record<Platform, ToolProgressMode> = { telegram: 'new', discord: 'new', slack: 'new', whatsapp: 'off', matrix: 'new' };
/** Slack's convention is reactions on the message a bot works on; elsewhere they are opt-in. */
const DEFAULT_REACTIONS: Record<Platform, 'on' | 'off'> = { telegram: 'off', discord: 'off', slack: 'on', whatsapp: 'off', matrix: 'off' };

function reactionSetting(raw: string | undefined, platform: Platform): StatusReactionSetting {
  if (raw === undefined) return DEFAULT_REACTIONS[platform];
  if (raw === 'on' || raw === 'off') return raw;
  const [queued, tools, done, error] = raw.split(',').map((e) => e.trim());
  return { queued, tools, done, error };
}

/** The emoji to use on this egress, or undefined for none. */
export function statusReactionsFor(
  settings: ProgressSettings | undefined,
  platform: string,
  egress: { statusReactions?: StatusReactions },
): StatusReactions | undefined {
  const setting = settings?.reactions[platform as Platform] ?? (platform === 'slack' ? 'on' : 'off');
  if (setting === 'off') return undefined;
  return setting === 'on' ? egress.statusReactions : setting;
}

/** `<PLATFORM>_TOOL_PROGRESS` / `_STATUS_REACTIONS`, else the HERALD_ setting, else the platform's default. */
export function progressSettings(config: HeraldConfig): ProgressSettings {
  const pick = (platform: Platform, own: ToolProgressMode | undefined): ToolProgressMode => own ?? config.toolProgress ?? DEFAULT_TOOL_PROGRESS[platform];
  const reactions = (platform: Platform, own: string | undefined): StatusReactionSetting => reactionSetting(own ?? config.statusReactions, platform);
  return {
    reactions: {
      telegram: reactions('telegram', config.telegram.statusReactions),
      discord: reactions('discord', config.discord.statusReactions),
      slack: reactions('slack', config.slack.statusReactions),
      whatsapp: reactions('whatsapp', config.whatsapp.statusReactions),
      matrix: reactions('matrix', config.matrix.statusReactions),
    },
    streaming: {
      telegram: config.telegram.streaming ?? config.streaming,
      discord: config.discord.streaming ?? config.streaming,
      slack: config.slack.streaming ?? config.streaming,
      // WhatsApp cannot edit a sent message: nothing to stream into (out/progress.ts checks the egress too).
      whatsapp: false,
      matrix: config.matrix.streaming ?? config.streaming,
    },
    typingDelayMs: config.typingDelayMs,
    interimMessages: config.interimMessages,
    toolProgress: {
      telegram: pick('telegram', config.telegram.toolProgress),
      discord: pick('discord', config.discord.toolProgress),
      slack: pick('slack', config.slack.toolProgress),
      whatsapp: pick('whatsapp', config.whatsapp.toolProgress),
      matrix: pick('matrix', config.matrix.toolProgress),
    },
  };
}
