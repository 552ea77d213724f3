/**
 * Builds each enabled platform's halves from the config: ingress (connections; ingress role only) and egress
 * (REST; any role, created on first use so a worker opens nothing it does not need).
 */
import type { Logger } from './logger.js';
import type { Platform, PlatformEgress, PlatformFiles, PlatformIngress } from '@herald/adapters';
import { createTelegramEgress, createTelegramFiles, createTelegramIngress } from '@herald/adapters/telegram';
import { createDiscordEgress, createDiscordIngress, DiscordFiles } from '@herald/adapters/discord';
import { createSlackEgress, createSlackIngress, SlackFiles } from '@herald/adapters/slack';
import type { FastifyInstance } from 'fastify';
import type { HeraldConfig } from './config/load.js';
import { menuCommands } from './commands/registry.js';
import type { KnownThreads } from './sessions/known-threads.js';

export type IngressWithRoutes = PlatformIngress & { registerRoutes?: (app: FastifyInstance) => void };

export class UnknownPlatformError extends Error {
  override name = 'UnknownPlatformError';
}

/** `extra`: egresses built elsewhere (the HTTP API's, which answers through Redis), by platform name. */
export function createEgressRegistry(config: HeraldConfig, log: Logger, extra: Record<string, PlatformEgress> = {}): (platform: string) => PlatformEgress {
  const cache = new Map<string, PlatformEgress>(Object.entries(extra));
  return (platform) => {
    let egress = cache.get(platform);
    if (egress) return egress;
    const logger = log.child({ platform });
    switch (platform) {
      case 'telegram':
        if (!config.telegram.botToken) throw new UnknownPlatformError('telegram is not configured (TELEGRAM_BOT_TOKEN)');
        egress = createTelegramEgress({ token: config.telegram.botToken, apiRoot: config.telegram.apiRoot, logger });
        break;
      case 'discord':
        if (!config.discord.botToken) throw new UnknownPlatformError('discord is not configured (DISCORD_BOT_TOKEN)');
        egress = createDiscordEgress({ botToken: config.discord.botToken, apiUrl: config.discord.apiUrl, logger });
        break;
      case 'slack':
        if (!config.slack.botToken) throw new UnknownPlatformError('slack is not configured (SLACK_BOT_TOKEN)');
        egress = createSlackEgress({ botToken: config.slack.botToken, apiUrl: config.slack.apiUrl, logger });
        break;
      default:
        throw new UnknownPlatformError(`no egress for platform ${platform}`);
    }
    cache.set(platform, egress);
    return egress;
  };
}

/** Each platform's file downloads (REST only, like egress), created on first use. */
export function createFilesRegistry(config: HeraldConfig, log: Logger): (platform: string) => PlatformFiles {
  const cache = new Map<string, PlatformFiles>();
  return (platform) => {
    let files = cache.get(platform);
    if (files) return files;
    switch (platform) {
      case 'telegram':
        if (!config.telegram.botToken) throw new UnknownPlatformError('telegram is not configured (TELEGRAM_BOT_TOKEN)');
        files = createTelegramFiles({ token: config.telegram.botToken, apiRoot: config.telegram.apiRoot, logger: log.child({ platform }) });
        break;
      case 'discord':
        if (!config.discord.botToken) throw new UnknownPlatformError('discord is not configured (DISCORD_BOT_TOKEN)');
        files = new DiscordFiles({ botToken: config.discord.botToken, apiUrl: config.discord.apiUrl });
        break;
      case 'slack':
        if (!config.slack.botToken) throw new UnknownPlatformError('slack is not configured (SLACK_BOT_TOKEN)');
        files = new SlackFiles({ botToken: config.slack.botToken, apiUrl: config.slack.apiUrl, logger: log.child({ platform }) });
        break;
      default:
        throw new UnknownPlatformError(`no file downloads for platform ${platform}`);
    }
    cache.set(platform, files);
    return files;
  };
}

export function createIngresses(config: HeraldConfig, threads: KnownThreads, log: Logger): Map<Platform, IngressWithRoutes> {
  const out = new Map<Platform, IngressWithRoutes>();
  const commands = menuCommands();
  const threadsOf = (platform: Platform) => threads.of(platform);
  const t = config.telegram;
  if (config.platforms.telegram.enabled && t.botToken) {
    out.set(
      'telegram',
      createTelegramIngress({
        token: t.botToken,
        apiRoot: t.apiRoot,
        webhook: t.webhookUrl ? { url: t.webhookUrl, secret: t.webhookSecret } : undefined,
        requireMention: t.requireMention,
        commands,
        logger: log.child({ platform: 'telegram' }),
      }),
    );
  }
  const d = config.discord;
  if (config.platforms.discord.enabled && d.botToken) {
    out.set(
      'discord',
      createDiscordIngress({
        botToken: d.botToken,
        apiUrl: d.apiUrl,
        requireMention: d.requireMention,
        autoThread: d.autoThread,
        freeResponseChannels: d.freeResponseChannels,
        allowBots: d.allowBots,
        threads: threadsOf('discord'),
        commands,
        slashCommands: { enabled: d.slashCommands, guildIds: d.commandGuilds },
        logger: log.child({ platform: 'discord' }),
      }),
    );
  }
  const s = config.slack;
  if (config.platforms.slack.enabled && s.botToken) {
    out.set(
      'slack',
      createSlackIngress({
        botToken: s.botToken,
        appToken: s.appToken,
        signingSecret: s.appToken ? undefined : s.signingSecret,
        apiUrl: s.apiUrl,
        threads: threadsOf('slack'),
        commands,
        slashCommands: s.slashCommands,
        logger: log.child({ platform: 'slack' }),
      }),
    );
  }
  return out;
}
