/**
 * Builds each enabled platform's halves from the config: ingress (connections; ingress role only) and egress
 * (REST; any role, created on first use so a worker opens nothing it does not need).
 *
 * A platform may have several bot accounts (HERALD_BOT_ACCOUNTS, support/config/profile-accounts.ts): the registries are keyed by
 * platform and account, so a reply goes out through the bot that received the message. `default` is the account
 * of the <PLATFORM>_BOT_TOKEN settings. A Discord or Slack bot has one API client, shared by its ingress, egress and
 * files (`clientsOf`).
 */
import type { Logger } from '../support/logger.js';
import type { InboundHandler, Platform, PlatformEgress, PlatformFiles, PlatformIngress } from '@herald/adapters';
import { createTelegramEgress, createTelegramFiles, createTelegramIngress, type PartsMemory } from '@herald/adapters/telegram';
import { createDiscordEgress, createDiscordIngress, createDiscordRest, DiscordFiles } from '@herald/adapters/discord';
import { createSlackClient, createSlackEgress, createSlackIngress, SlackFiles, SLACK_EVENTS_PATH } from '@herald/adapters/slack';
import { WhatsAppEgress, WhatsAppFiles, WhatsAppIngress, WhatsAppWebhook, type ServiceWindowMemory, type WindowTemplate } from '@herald/adapters/whatsapp';
import { MatrixEgress, MatrixFiles, MatrixIngress, type MatrixIngressMemory } from '@herald/adapters/matrix';
import type { FastifyInstance } from 'fastify';
import type { HeraldConfig } from '../support/config/load.js';
import { menuCommands } from '../edges/commands/registry.js';
import type { KnownThreads } from '../features/sessions/known-threads.js';
import { DEFAULT_ACCOUNT } from '../support/config/profile-accounts.js';

export type IngressWithRoutes = PlatformIngress & { registerRoutes?: (app: FastifyInstance) => void };

class UnknownPlatformError extends Error {
  override name = 'UnknownPlatformError';
}

/** One bot: its platform, account name and credentials (the default account's come from the platform settings). */
interface Bot {
  platform: string;
  account: string;
  token: string | undefined;
  appToken?: string;
  /** An extra Slack app's signing secret (Events over HTTP at its own path). */
  signingSecret?: string;
  webhook?: { url: string; secret?: string };
  /** The account's own API base, when it has one (else the platform setting's). */
  apiBase?: string;
  /** WhatsApp: the business phone number the account is. */
  phoneNumberId?: string;
}

/** The bot of a platform + account, or why there is none. */
function botOf(config: HeraldConfig, platform: string, account: string = DEFAULT_ACCOUNT): Bot {
  if (account !== DEFAULT_ACCOUNT) {
    const a = config.botAccounts.find((b) => b.platform === platform && b.name === account);
    if (!a) throw new UnknownPlatformError(`${platform} has no bot account "${account}" (HERALD_BOT_ACCOUNTS)`);
    if (a.platform === 'whatsapp') {
      return { platform, account, token: a.bot_token ?? config.whatsapp.accessToken, phoneNumberId: a.phone_number_id, apiBase: a.api_url };
    }
    return {
      platform,
      account,
      token: a.bot_token,
      appToken: a.platform === 'slack' ? a.app_token : undefined,
      signingSecret: a.platform === 'slack' ? a.signing_secret : undefined,
      webhook: a.platform === 'telegram' && a.webhook_url ? { url: a.webhook_url, secret: a.webhook_secret } : undefined,
      apiBase: a.platform === 'telegram' ? a.api_root : a.api_url,
    };
  }
  switch (platform) {
    case 'telegram':
      return { platform, account, token: config.telegram.botToken };
    case 'discord':
      return { platform, account, token: config.discord.botToken };
    case 'slack':
      return { platform, account, token: config.slack.botToken };
    case 'whatsapp':
      return { platform, account, token: config.whatsapp.accessToken, phoneNumberId: config.whatsapp.phoneNumberId };
    case 'matrix':
      return { platform, account, token: config.matrix.accessToken };
    default:
      throw new UnknownPlatformError(`no platform ${platform}`);
  }
}

function tokenOf(bot: Bot): string {
  const setting =
    bot.platform === 'whatsapp' || bot.platform === 'matrix' ? `${bot.platform.toUpperCase()}_ACCESS_TOKEN` : `${bot.platform.toUpperCase()}_BOT_TOKEN`;
  if (!bot.token) throw new UnknownPlatformError(`${bot.platform} is not configured (${setting})`);
  return bot.token;
}

function phoneNumberOf(bot: Bot): string {
  if (!bot.phoneNumberId) throw new UnknownPlatformError('whatsapp is not configured (WHATSAPP_PHONE_NUMBER_ID)');
  return bot.phoneNumberId;
}

/** `WHATSAPP_WINDOW_TEMPLATE` (`<name>:<language>`) as the adapter takes it. */
function windowTemplate(config: HeraldConfig): WindowTemplate | undefined {
  const raw = config.whatsapp.windowTemplate;
  if (!raw) return undefined;
  const at = raw.lastIndexOf(':');
  return { name: raw.slice(0, at), language: raw.slice(at + 1) };
}

/** Per gateway (its config), the one WhatsApp webhook every number's ingress attaches to (one Meta app, one URL). */
const webhooksByConfig = new WeakMap<HeraldConfig, WhatsAppWebhook>();

function whatsappWebhookOf(config: HeraldConfig, log: Logger): WhatsAppWebhook {
  let hook = webhooksByConfig.get(config);
  const { appSecret, verifyToken } = config.whatsapp;
  if (!appSecret || !verifyToken) throw new UnknownPlatformError('whatsapp is not configured (WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN)');
  if (!hook) webhooksByConfig.set(config, (hook = new WhatsAppWebhook({ appSecret, verifyToken, logger: log.child({ platform: 'whatsapp' }) })));
  return hook;
}

/** The Matrix account's connection (MATRIX_HOMESERVER_URL, MATRIX_ACCESS_TOKEN, MATRIX_USER_ID). */
function matrixConnectionOf(config: HeraldConfig, bot: Bot): { homeserverUrl: string; accessToken: string; userId: string } {
  const { homeserverUrl, userId } = config.matrix;
  if (!homeserverUrl || !userId) throw new UnknownPlatformError('matrix is not configured (MATRIX_HOMESERVER_URL, MATRIX_USER_ID)');
  return { homeserverUrl, accessToken: tokenOf(bot), userId };
}

const keyOf = (platform: string, account: string | undefined): string => (account && account !== DEFAULT_ACCOUNT ? `${platform}:${account}` : platform);

type DiscordRest = ReturnType<typeof createDiscordRest>;
type SlackClient = ReturnType<typeof createSlackClient>;
interface BotClients {
  discord: Map<string, DiscordRest>;
  slack: Map<string, SlackClient>;
}
/** Per gateway (its config), each bot's one API client, built on first use by whichever half needs it first. */
const clientsByConfig = new WeakMap<HeraldConfig, BotClients>();

function clientsOf(config: HeraldConfig): BotClients {
  let clients = clientsByConfig.get(config);
  if (!clients) clientsByConfig.set(config, (clients = { discord: new Map(), slack: new Map() }));
  return clients;
}

function cached<T>(map: Map<string, T>, key: string, build: () => T): T {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = build()));
  return value;
}

/** The Discord bot's one REST client (ingress, egress, files). */
function discordRestOf(config: HeraldConfig, bot: Bot): DiscordRest {
  return cached(clientsOf(config).discord, keyOf(bot.platform, bot.account), () =>
    createDiscordRest({ botToken: tokenOf(bot), apiUrl: bot.apiBase ?? config.discord.apiUrl }),
  );
}

/** The Slack bot's one Web API client (ingress, egress, files). */
function slackClientOf(config: HeraldConfig, bot: Bot, log: Logger): SlackClient {
  const logger = log.child({ platform: 'slack', ...(bot.account !== DEFAULT_ACCOUNT && { account: bot.account }) });
  return cached(clientsOf(config).slack, keyOf(bot.platform, bot.account), () =>
    createSlackClient({ botToken: tokenOf(bot), apiUrl: bot.apiBase ?? config.slack.apiUrl, logger }),
  );
}

/** `extra`: egresses built elsewhere (the HTTP API's, which answers through Redis), by platform name. */
export function createEgressRegistry(
  config: HeraldConfig,
  log: Logger,
  extra: Record<string, PlatformEgress>,
  /** WhatsApp's 24-hour windows (edges/ingress/service-window.ts), shared with the ingresses. */
  window: ServiceWindowMemory,
): (platform: string, account?: string) => PlatformEgress {
  const cache = new Map<string, PlatformEgress>(Object.entries(extra));
  return (platform, account) => {
    const key = keyOf(platform, account);
    let egress = cache.get(key);
    if (egress) return egress;
    if (!['telegram', 'discord', 'slack', 'whatsapp', 'matrix'].includes(platform)) throw new UnknownPlatformError(`no egress for platform ${platform}`);
    const bot = botOf(config, platform, account);
    const logger = log.child({ platform, ...(account && account !== DEFAULT_ACCOUNT && { account }) });
    if (platform === 'telegram') egress = createTelegramEgress({ token: tokenOf(bot), apiRoot: bot.apiBase ?? config.telegram.apiRoot, logger });
    else if (platform === 'discord') egress = createDiscordEgress({ botToken: tokenOf(bot), logger, rest: discordRestOf(config, bot) });
    else if (platform === 'matrix') egress = new MatrixEgress({ ...matrixConnectionOf(config, bot), logger });
    else if (platform === 'whatsapp') {
      const apiUrl = bot.apiBase ?? config.whatsapp.apiUrl;
      egress = new WhatsAppEgress({ accessToken: tokenOf(bot), phoneNumberId: phoneNumberOf(bot), apiUrl, logger, window, template: windowTemplate(config) });
    } else egress = createSlackEgress({ botToken: tokenOf(bot), logger, client: slackClientOf(config, bot, log) });
    cache.set(key, egress);
    return egress;
  };
}

/** Each platform's file downloads (REST only, like egress), created on first use. */
export function createFilesRegistry(config: HeraldConfig, log: Logger): (platform: string, account?: string) => PlatformFiles {
  const cache = new Map<string, PlatformFiles>();
  return (platform, account) => {
    const key = keyOf(platform, account);
    let files = cache.get(key);
    if (files) return files;
    if (platform === 'discord') {
      const bot = botOf(config, platform, account);
      files = new DiscordFiles({ botToken: tokenOf(bot), rest: discordRestOf(config, bot) });
    } else if (platform === 'telegram') {
      const bot = botOf(config, platform, account);
      files = createTelegramFiles({ token: tokenOf(bot), apiRoot: bot.apiBase ?? config.telegram.apiRoot, logger: log.child({ platform }) });
    } else if (platform === 'slack') {
      const bot = botOf(config, platform, account);
      files = new SlackFiles({ botToken: tokenOf(bot), logger: log.child({ platform }), client: slackClientOf(config, bot, log) });
    } else if (platform === 'whatsapp') {
      const bot = botOf(config, platform, account);
      files = new WhatsAppFiles({ accessToken: tokenOf(bot), apiUrl: bot.apiBase ?? config.whatsapp.apiUrl });
    } else if (platform === 'matrix') {
      files = new MatrixFiles(matrixConnectionOf(config, botOf(config, platform, account)));
    } else throw new UnknownPlatformError(`no file downloads for platform ${platform}`);
    cache.set(key, files);
    return files;
  };
}

/** An ingress and the account it connects as. */
interface AccountIngress {
  platform: Platform;
  account: string;
  ingress: IngressWithRoutes;
}

/**
 * The ingresses, keyed `telegram`, `discord`, `slack` for the default accounts and `<platform>:<account>` for the
 * others.
 */
export function createIngresses(
  config: HeraldConfig,
  threads: KnownThreads,
  log: Logger,
  parts: PartsMemoryOf,
  window: ServiceWindowMemory,
  matrixMemory: MatrixMemoryOf,
): Map<string, IngressWithRoutes> {
  return new Map(accountIngresses(config, threads, log, parts, window, matrixMemory).map((a) => [keyOf(a.platform, a.account), a.ingress]));
}

/** What a Matrix account's ingress keeps across restarts (edges/ingress/matrix-memory.ts), by its user id. */
export type MatrixMemoryOf = (userId: string) => MatrixIngressMemory;

/** Where a bot account's Telegram ingress remembers the parts it took (edges/ingress/parts-memory.ts); absent: its own process. */
export type PartsMemoryOf = (account: string) => PartsMemory;

function accountIngresses(
  config: HeraldConfig,
  threads: KnownThreads,
  log: Logger,
  parts: PartsMemoryOf,
  window: ServiceWindowMemory,
  matrixMemory: MatrixMemoryOf,
): AccountIngress[] {
  const bots: Bot[] = [];
  if (config.platforms.telegram.enabled)
    bots.push({
      ...botOf(config, 'telegram'),
      webhook: config.telegram.webhookUrl ? { url: config.telegram.webhookUrl, secret: config.telegram.webhookSecret } : undefined,
    });
  if (config.platforms.discord.enabled) bots.push(botOf(config, 'discord'));
  if (config.platforms.slack.enabled) bots.push(botOf(config, 'slack'));
  if (config.platforms.whatsapp.enabled) bots.push(botOf(config, 'whatsapp'));
  if (config.platforms.matrix.enabled) bots.push(botOf(config, 'matrix'));
  for (const a of config.botAccounts) if (config.platforms[a.platform].enabled) bots.push(botOf(config, a.platform, a.name));
  return bots.map((bot) => ({
    platform: bot.platform as Platform,
    account: bot.account,
    ingress: ingressOf(config, bot, threads, log, parts, window, matrixMemory),
  }));
}

function ingressOf(
  config: HeraldConfig,
  bot: Bot,
  threads: KnownThreads,
  log: Logger,
  parts: PartsMemoryOf,
  window: ServiceWindowMemory,
  matrixMemory: MatrixMemoryOf,
): IngressWithRoutes {
  const commands = menuCommands();
  const platform = bot.platform as Platform;
  const logger = log.child({ platform, ...(bot.account !== DEFAULT_ACCOUNT && { account: bot.account }) });
  if (platform === 'whatsapp') return new WhatsAppIngress(whatsappWebhookOf(config, log), { phoneNumberId: phoneNumberOf(bot), logger, window });
  if (platform === 'matrix') return matrixIngressOf(config, bot, threads, logger, matrixMemory);
  const token = tokenOf(bot);
  if (platform === 'telegram') {
    const t = config.telegram;
    return createTelegramIngress({
      token,
      apiRoot: bot.apiBase ?? t.apiRoot,
      webhook: bot.webhook,
      requireMention: t.requireMention,
      commands,
      logger,
      partsMemory: parts(bot.account),
    });
  }
  if (platform === 'discord') {
    const d = config.discord;
    return createDiscordIngress({
      botToken: token,
      apiUrl: bot.apiBase ?? d.apiUrl,
      rest: discordRestOf(config, bot),
      requireMention: d.requireMention,
      autoThread: d.autoThread,
      freeResponseChannels: d.freeResponseChannels,
      allowBots: d.allowBots,
      threads: threads.of('discord'),
      commands,
      slashCommands: { enabled: d.slashCommands, guildIds: d.commandGuilds },
      logger,
    });
  }
  const s = config.slack;
  const own = bot.account === DEFAULT_ACCOUNT ? s : bot;
  const appToken = own.appToken;
  return createSlackIngress({
    botToken: token,
    appToken,
    // Each Slack app has its own Request URL: an extra app's events come to a path of its own.
    signingSecret: appToken ? undefined : own.signingSecret,
    eventsPath: slackEventsPath(bot.account),
    apiUrl: bot.apiBase ?? s.apiUrl,
    client: slackClientOf(config, bot, log),
    threads: threads.of('slack'),
    commands,
    slashCommands: s.slashCommands,
    logger,
  });
}

function matrixIngressOf(config: HeraldConfig, bot: Bot, threads: KnownThreads, logger: Logger, matrixMemory: MatrixMemoryOf): MatrixIngress {
  const conn = matrixConnectionOf(config, bot);
  const m = config.matrix;
  // Invites: from whom MATRIX_INVITE_FROM says, else from the users allowed to talk to the bot.
  const inviteFrom =
    m.inviteFrom.length > 0 ? m.inviteFrom : m.allowAllUsers || config.gateway.allowAllUsers ? ['*'] : [...m.allowedUsers, ...config.gateway.allowedUsers];
  return new MatrixIngress({ ...conn, logger, memory: matrixMemory(conn.userId), inviteFrom, allowedRooms: m.allowedRooms, threads: threads.of('matrix') });
}

/** Where a Slack app's Events over HTTP arrive: `/slack/events`, or `/slack/events/<account>` for an extra app. */
function slackEventsPath(account: string): string {
  return account === DEFAULT_ACCOUNT ? SLACK_EVENTS_PATH : `${SLACK_EVENTS_PATH}/${account}`;
}

/**
 * What an extra account's ingress hands over: the message stamped with its account, and its id made unique to it
 * (two bots in one group both see a message; each answers it once).
 */
export function stampAccount(account: string, handle: InboundHandler): InboundHandler {
  if (account === DEFAULT_ACCOUNT) return handle;
  return (msg) => handle({ ...msg, account, messageId: `${account}/${msg.messageId}` });
}
