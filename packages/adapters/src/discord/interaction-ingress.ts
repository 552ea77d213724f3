/**
 * The connection side of Discord application commands: registering them once the gateway is ready, and taking an
 * invoked command. Discord wants an answer within 3 s, and a command may take longer (a store, Redis), so every
 * command is acknowledged at once with a deferred response; the gateway's answer then fills it in through the
 * interaction's webhook (egress `answerInteraction`), from whichever process answers.
 */
import { MessageFlags, type Client, type Interaction } from 'discord.js';
import type { Logger } from 'pino';
import type { InboundHandler } from '../types.js';
import {
  answersEphemerally,
  applicationCommandsFor,
  DISCORD_COMMAND_OPTION,
  invocationToInbound,
  pressToInbound,
  type CommandInvocation,
  type InteractionPlace,
  type CommandMenuEntry,
  type SlashCommandSettings,
} from './app-commands.js';

/**
 * PUT the whole list (global, or per listed server): Discord replaces what was registered before, so a command
 * removed from the table disappears too. A refusal is logged, never fatal: typed commands still work.
 */
export async function registerApplicationCommands(
  client: Client,
  entries: readonly CommandMenuEntry[],
  settings: SlashCommandSettings,
  log: Logger,
): Promise<void> {
  const application = client.application;
  if (!settings.enabled || application === null || entries.length === 0) return;
  const defs = applicationCommandsFor(entries);
  const scopes: Array<string | undefined> = settings.guildIds.length > 0 ? settings.guildIds : [undefined];
  for (const guildId of scopes) {
    try {
      await application.commands.set(defs, guildId as string);
      log.info({ count: defs.length, scope: guildId ?? 'global' }, 'discord application commands registered');
    } catch (err) {
      log.warn(
        { err: err instanceof Error ? err.message : String(err), scope: guildId ?? 'global' },
        'discord application commands not registered; typed commands still work',
      );
    }
  }
}

function placeOf(interaction: Interaction): InteractionPlace {
  const channel = interaction.channel;
  const user = interaction.user;
  return {
    id: interaction.id,
    applicationId: interaction.applicationId,
    token: interaction.token,
    channelId: interaction.channelId ?? '',
    channelType: channel?.type ?? null,
    parentId: channel !== null && 'parentId' in channel ? (channel.parentId ?? null) : null,
    guildId: interaction.guildId,
    userId: user.id,
    userName: user.globalName ?? user.username,
    createdAt: interaction.createdTimestamp,
  };
}

function invocationOf(interaction: Interaction): CommandInvocation | null {
  if (!interaction.isChatInputCommand()) return null;
  return { ...placeOf(interaction), commandName: interaction.commandName, input: interaction.options.getString(DISCORD_COMMAND_OPTION, false) };
}

/**
 * A button press: acknowledged at once with a deferred update (the message stays as it is), then handed over with
 * the button's custom_id; the gateway decides whether the press still counts. Never rejects.
 */
export async function takeButtonPress(interaction: Interaction, handler: InboundHandler, log: Logger): Promise<void> {
  if (!interaction.isButton()) return;
  const place = placeOf(interaction);
  if (place.channelId === '') return;
  try {
    await interaction.deferUpdate();
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err), interactionId: place.id }, 'discord button press not acknowledged; dropped');
    return;
  }
  try {
    await handler(pressToInbound(place, interaction.customId));
  } catch (err) {
    log.error({ err: err instanceof Error ? err.message : String(err), interactionId: place.id }, 'discord button press not handed over');
  }
}

/**
 * Acknowledges the command (deferred, ephemeral in servers), then hands it to the gateway. A command that could not
 * be acknowledged in time is dropped: Discord already showed the user "The application did not respond".
 * Never rejects.
 */
export async function takeCommandInteraction(interaction: Interaction, handler: InboundHandler, log: Logger): Promise<void> {
  const inv = invocationOf(interaction);
  if (inv === null || inv.channelId === '' || !interaction.isChatInputCommand()) return;
  try {
    await interaction.deferReply(answersEphemerally(inv) ? { flags: MessageFlags.Ephemeral } : {});
  } catch (err) {
    log.warn({ err: err instanceof Error ? err.message : String(err), interactionId: inv.id }, 'discord command not acknowledged; dropped');
    return;
  }
  try {
    await handler(invocationToInbound(inv));
  } catch (err) {
    log.error({ err: err instanceof Error ? err.message : String(err), interactionId: inv.id }, 'discord command not handed over');
  }
}
