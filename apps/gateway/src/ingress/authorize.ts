/**
 * Who may talk to the agent (Hermes' rules): a platform's allowlist, the global allowlist, or an allow-all
 * switch. With nothing set, everyone is denied (and start-up warns once).
 */
import type { Platform } from '@herald/adapters';
import type { HeraldConfig } from '../config/load.js';

export interface AccessPolicy {
  isAllowed(platform: Platform, userId: string): boolean;
  /** True when no allowlist and no allow-all switch is set anywhere: nobody gets in. */
  readonly lockedDown: boolean;
}

export function accessPolicy(config: HeraldConfig, approved?: (platform: Platform, userId: string) => boolean): AccessPolicy {
  const perPlatform = {
    telegram: { all: config.telegram.allowAllUsers, users: new Set(config.telegram.allowedUsers) },
    discord: { all: config.discord.allowAllUsers, users: new Set(config.discord.allowedUsers) },
    slack: { all: config.slack.allowAllUsers, users: new Set(config.slack.allowedUsers) },
  };
  const global = { all: config.gateway.allowAllUsers, users: new Set(config.gateway.allowedUsers) };
  const lockedDown = !global.all && global.users.size === 0 && Object.values(perPlatform).every((p) => !p.all && p.users.size === 0);
  return {
    lockedDown,
    isAllowed(platform, userId) {
      const p = perPlatform[platform];
      return global.all || p.all || global.users.has(userId) || p.users.has(userId) || (approved?.(platform, userId) ?? false);
    },
  };
}
