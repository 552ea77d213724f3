/**
 * Discord application (slash) commands: the definitions registered from the gateway's command table, and an
 * invoked command turned into an InboundMessage whose text is the chat command (`/status`, `/title Trip`), so the
 * gateway's one command table answers it like a typed command — same authorisation, pairing and session key.
 *
 * Pure functions over plain data: ingress.ts reads discord.js' interaction into `CommandInvocation`.
 */
import type { ChatType, InboundMessage, InteractionRef } from '../types.js';
import { discordCodec } from './codec.js';

/** Discord: command names 1-32 lowercase letters, digits, `-` or `_`; descriptions 1-100 characters. */
const DISCORD_COMMAND_NAME_RE = /^[-_\p{Ll}\p{N}]{1,32}$/u;
const DISCORD_COMMAND_DESCRIPTION_MAX = 100;
/** The one optional text option a command with arguments takes. */
export const DISCORD_COMMAND_OPTION = 'input';
/** Discord's application command option type STRING. */
const OPTION_TYPE_STRING = 3;
/** Channel types (Discord's channel object): DM, and the three kinds of thread. */
const CHANNEL_DM = 1;
const THREAD_TYPES = new Set([10, 11, 12]);

/** A command of the gateway's table, as handed to the adapter. */
export interface CommandMenuEntry {
  name: string;
  description: string;
  /** Shown as the option's description, e.g. `<text>` or `[name]`; absent: the command takes no input. */
  args?: string;
  aliases?: readonly string[];
}

/** Where application commands are registered: globally (every server and DMs) or in the listed servers only. */
export interface SlashCommandSettings {
  enabled: boolean;
  /** Empty: global. Per-server registration takes effect at once; global can take a while to reach clients. */
  guildIds: string[];
}

/** The API JSON of one CHAT_INPUT command (PUT /applications/{id}/commands takes a list of these). */
export interface ApplicationCommandJson {
  name: string;
  description: string;
  type: 1;
  options?: Array<{ type: number; name: string; description: string; required: boolean }>;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** One definition per name and alias; names Discord would refuse are left out rather than failing the whole list. */
export function applicationCommandsFor(entries: readonly CommandMenuEntry[]): ApplicationCommandJson[] {
  const out: ApplicationCommandJson[] = [];
  for (const e of entries) {
    for (const name of [e.name, ...(e.aliases ?? [])]) {
      if (!DISCORD_COMMAND_NAME_RE.test(name)) continue;
      const description = clip(name === e.name ? e.description : `${e.description} (same as /${e.name})`, DISCORD_COMMAND_DESCRIPTION_MAX);
      const json: ApplicationCommandJson = { name, description, type: 1 };
      if (e.args) {
        json.options = [
          { type: OPTION_TYPE_STRING, name: DISCORD_COMMAND_OPTION, description: clip(e.args, DISCORD_COMMAND_DESCRIPTION_MAX), required: false },
        ];
      }
      out.push(json);
    }
  }
  return out;
}

/** What the adapter reads from any interaction: who, where, and how to answer it. */
export interface InteractionPlace {
  id: string;
  applicationId: string;
  token: string;
  channelId: string;
  /** Discord channel type of the channel it was invoked in (1 DM, 10-12 threads, …). */
  channelType: number | null;
  /** A thread's parent channel. */
  parentId: string | null;
  guildId: string | null;
  userId: string;
  userName: string;
  /** When Discord created the interaction (from its snowflake). */
  createdAt: number;
}

/** An invoked command (a ChatInputCommandInteraction). */
export interface CommandInvocation extends InteractionPlace {
  commandName: string;
  /** The `input` option's value, when given. */
  input: string | null;
}

/** DMs answer in the open; in servers only the person who typed the command sees the answer. */
export function answersEphemerally(inv: Pick<CommandInvocation, 'guildId'>): boolean {
  return inv.guildId !== null;
}

/** The chat command the invocation stands for, e.g. `/title Trip to Rome`. */
export function commandText(inv: Pick<CommandInvocation, 'commandName' | 'input'>): string {
  const input = inv.input?.trim() ?? '';
  return input === '' ? `/${inv.commandName}` : `/${inv.commandName} ${input}`;
}

/** Where an interaction happened, as a conversation: a DM, a thread (chat = parent channel) or a channel. */
function placementOf(inv: InteractionPlace): Pick<InboundMessage, 'conversationId' | 'chatType' | 'chatId' | 'threadId'> {
  const inThread = inv.channelType !== null && THREAD_TYPES.has(inv.channelType) && inv.parentId !== null;
  const chatType: ChatType = inv.channelType === CHANNEL_DM || inv.guildId === null ? 'dm' : inThread ? 'thread' : 'channel';
  const chatId = inThread ? (inv.parentId as string) : inv.channelId;
  return {
    conversationId: discordCodec.encode(inThread ? { channelId: chatId, threadId: inv.channelId } : { channelId: chatId }),
    chatType,
    chatId,
    ...(inThread && { threadId: inv.channelId }),
  };
}

function interactionMessage(inv: InteractionPlace, text: string, interaction: InteractionRef): InboundMessage {
  return {
    platform: 'discord',
    // The interaction's snowflake: unique, and what a redelivered INTERACTION_CREATE would carry again.
    messageId: inv.id,
    ...placementOf(inv),
    userId: inv.userId,
    userName: inv.userName,
    text,
    attachments: [],
    platformMessageId: inv.id,
    sentAt: inv.createdAt,
    interaction,
  };
}

export function invocationToInbound(inv: CommandInvocation): InboundMessage {
  const { id, applicationId, token } = inv;
  return interactionMessage(inv, commandText(inv), { kind: 'command', id, applicationId, token, ephemeral: answersEphemerally(inv) });
}

/** A button press: no text, the button's custom_id as `press.data`; notes about it go to the presser alone. */
export function pressToInbound(inv: InteractionPlace, customId: string): InboundMessage {
  const { id, applicationId, token } = inv;
  return { ...interactionMessage(inv, '', { kind: 'press', id, applicationId, token, ephemeral: true }), press: { data: customId } };
}
