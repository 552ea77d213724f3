/**
 * Who may talk to the agent (Hermes' rules): a platform's allowlist, the global allowlist, an allow-all switch,
 * or an approved pairing. With nothing set, everyone is denied (and start-up warns once).
 *
 * Every message goes through `admit` before anything else — commands and messages to a busy session included —
 * so nobody can stop, inspect or steer someone else's conversation.
 */
import type { InboundMessage, Platform } from '@herald/adapters';
import type { HeraldConfig } from '../../support/config/load.js';
import { HERALD_COMMAND } from '../../support/herald-command.js';
import type { Logger } from '../../support/logger.js';
import type { PairingRequestResult, PairingService } from '../../features/pairing/index.js';

export interface AccessPolicy {
  isAllowed(platform: Platform, userId: string): Promise<boolean>;
  /** True when no allowlist and no allow-all switch is set anywhere: nobody gets in (but pairing). */
  readonly lockedDown: boolean;
}

export function accessPolicy(config: HeraldConfig, approved?: (platform: Platform, userId: string) => Promise<boolean>): AccessPolicy {
  const perPlatform = {
    telegram: { all: config.telegram.allowAllUsers, users: new Set(config.telegram.allowedUsers) },
    discord: { all: config.discord.allowAllUsers, users: new Set(config.discord.allowedUsers) },
    slack: { all: config.slack.allowAllUsers, users: new Set(config.slack.allowedUsers) },
    whatsapp: { all: config.whatsapp.allowAllUsers, users: new Set(config.whatsapp.allowedUsers) },
    matrix: { all: config.matrix.allowAllUsers, users: new Set(config.matrix.allowedUsers) },
  };
  const global = { all: config.gateway.allowAllUsers, users: new Set(config.gateway.allowedUsers) };
  const lockedDown = !global.all && global.users.size === 0 && Object.values(perPlatform).every((p) => !p.all && p.users.size === 0);
  return {
    lockedDown,
    async isAllowed(platform, userId) {
      const p = perPlatform[platform];
      if (global.all || p.all || global.users.has(userId) || p.users.has(userId)) return true;
      return approved ? approved(platform, userId) : false;
    },
  };
}

export interface AdmitDeps {
  policy: AccessPolicy;
  /** Hands an unknown user's DM a pairing code. */
  pairing: PairingService;
  log: Logger;
}

/**
 * True when the message may go on. Otherwise it has been dealt with: an unknown user's DM is answered with a
 * pairing code (or why there is none), anything in a group gets silence, so strangers cannot make the bot talk
 * in other people's channels.
 */
export async function admit(deps: AdmitDeps, msg: InboundMessage, reply: (text: string) => Promise<unknown>): Promise<boolean> {
  if (await deps.policy.isAllowed(msg.platform, msg.userId)) return true;
  const log = deps.log.child({ platform: msg.platform, userId: msg.userId, chatType: msg.chatType });
  if (msg.chatType !== 'dm') {
    log.info('message from an unauthorised user ignored');
    return false;
  }
  const res = await deps.pairing.request(msg.platform, msg.userId, msg.userName);
  if (res.status === 'already_approved') return true; // approved between the two checks
  log.info({ pairing: res.status }, 'unauthorised DM: pairing');
  await reply(pairingReply(msg.platform, res));
  return false;
}

function pairingReply(platform: Platform, res: Exclude<PairingRequestResult, { status: 'already_approved' }>): string {
  switch (res.status) {
    case 'issued':
      return [
        "👋 I don't know you yet. Your pairing code is:",
        '',
        res.code,
        '',
        `Ask the owner of this bot to approve it within an hour: ${HERALD_COMMAND} pairing approve ${platform} ${res.code}`,
      ].join('\n');
    case 'rate_limited':
      return `I sent you a pairing code a few minutes ago; ask the bot's owner to approve it. You can ask for a new one in ${Math.ceil(res.retryAfterMs / 60_000)} min.`;
    case 'too_many_pending':
      return 'Too many people are waiting for approval right now. Please try again later.';
    case 'locked':
      return `Pairing is paused after too many wrong codes. Please try again in ${Math.ceil(res.retryAfterMs / 60_000)} min.`;
  }
}
