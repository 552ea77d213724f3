/**
 * How progress is shown, per platform, as the config says: read once per process (sessions/services.ts) and
 * rendered by turns/progress.ts.
 */
import type { Platform } from '@herald/adapters';
import type { HeraldConfig } from './load.js';

export type ToolProgressMode = 'off' | 'new' | 'all';

export interface ProgressSettings {
  streaming: boolean;
  /** Text the model writes before its tool calls ("Let me look that up.") is shown as a message of its own. */
  interimMessages: boolean;
  toolProgress: Record<Platform, ToolProgressMode>;
}

const DEFAULT_TOOL_PROGRESS: Record<Platform, ToolProgressMode> = { telegram: 'off', discord: 'new', slack: 'off' };

/** `<PLATFORM>_TOOL_PROGRESS`, else HERALD_TOOL_PROGRESS, else the platform's default. */
export function progressSettings(config: HeraldConfig): ProgressSettings {
  const pick = (platform: Platform, own: ToolProgressMode | undefined): ToolProgressMode =>
    own ?? config.toolProgress ?? DEFAULT_TOOL_PROGRESS[platform];
  return {
    streaming: config.streaming,
    interimMessages: config.interimMessages,
    toolProgress: {
      telegram: pick('telegram', config.telegram.toolProgress),
      discord: pick('discord', config.discord.toolProgress),
      slack: pick('slack', config.slack.toolProgress),
    },
  };
}
