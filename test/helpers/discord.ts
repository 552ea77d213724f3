/**
 * Discord helpers for end-to-end tests: the gateway environment for the Discord stand-in, what the bot posted
 * where, and waiting until a gateway process holds a live Discord session.
 */
import type { DiscordFake } from '../fakes/discord/index.js';
import type { FakeLLM } from '../fakes/llm/index.js';
import type { GatewayProcess } from './gateway.js';
import { waitFor } from './ports.js';

/** The adapter's info line once READY and every GUILD_CREATE have arrived (packages/adapters/src/discord/ingress.ts). */
const DISCORD_READY_LOG = 'discord gateway ready';
/** Debug lines (HERALD_LOG_LEVEL=debug) that show a redelivered message was dropped: by the adapter, or by the mailbox. */
const ADAPTER_REPLAY_DROPPED_LOG = 'discord message seen before (replayed); dropped';
const ROUTER_ROUTED_LOG = 'message routed';

/** Gateway environment for a Discord stand-in and an OpenAI stand-in, everyone allowed. */
export function discordEnv(discord: DiscordFake, llm: FakeLLM, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiRoot,
    HERALD_MODEL: 'openai:gpt-4.1-mini',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.url,
    GATEWAY_ALLOW_ALL_USERS: 'true',
    ...extra,
  };
}

/** Texts the bot posted in one channel (a DM, a text channel or a thread), in order. */
export function discordRepliesIn(discord: DiscordFake, channelId: string): string[] {
  return discord.sent.filter((s) => s.channelId === channelId).map((s) => s.content);
}

/** `<@bot> text`, the way the Discord client writes a mention. */
export function mentionBot(discord: DiscordFake, text: string): string {
  return `<@${discord.bot.id}> ${text}`;
}

/**
 * Waits until the process's Discord client is READY. /health answers before that, and a message posted to the
 * stand-in before the client has IDENTIFYed would reach no live session.
 */
export async function waitForDiscordReady(gw: GatewayProcess, timeoutMs = 20_000): Promise<void> {
  await waitFor(() => gw.logs().some((l) => l.msg === DISCORD_READY_LOG), { timeoutMs, what: 'the gateway to log "discord gateway ready"' });
}

/**
 * Whether the process dropped a redelivery of this message, in the adapter (its recent-ids memory) or in the
 * session mailbox (its seen check). Needs HERALD_LOG_LEVEL=debug. Proves a replay really reached the gateway.
 */
export function replayWasDropped(gw: GatewayProcess, messageId: string): boolean {
  return gw
    .logs()
    .some((l) => l.messageId === messageId && (l.msg === ADAPTER_REPLAY_DROPPED_LOG || (l.msg === ROUTER_ROUTED_LOG && l.status === 'duplicate')));
}
