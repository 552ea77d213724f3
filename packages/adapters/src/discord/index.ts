/**
 * The Discord adapter: gateway ingress (discord.js Client), REST egress and files over one REST client per bot
 * (@discordjs/rest, rest.ts) and the conversation codec.
 */
export { createDiscordIngress, type DiscordIngress } from './ingress.js';
export { createDiscordEgress, DiscordEgress } from './egress.js';
export { createDiscordRest, type DiscordRestOptions } from './rest.js';
export { DiscordFiles, type DiscordFilesOptions } from './files.js';
export { discordCodec, replyChannelOf, messageChannelOf, type DiscordConversation } from './codec.js';
export { formatForDiscord } from './format.js';

export {
  DISCORD_MAX_MESSAGE_LENGTH,
  DISCORD_TYPING_REFRESH_MS,
  DISCORD_DEFAULT_API_URL,
  type AllowBots,
  type DiscordEgressOptions,
  type DiscordIngressOptions,
  type ThreadParticipation,
} from './config.js';
