/**
 * `/voice on|off`: answers also as voice replies (text-to-speech, HERALD_TTS_MODEL) — a voice note on Telegram,
 * an audio file on Discord and Slack (WhatsApp shows its OGG/Opus audio message as a voice note too). Remembered per conversation (features/sessions/voice-replies.ts). Without a speech
 * model nothing is switched on and the user is told who can change that.
 */
import type { CommandDeps, CommandInput } from './context.js';

export const VOICE_USAGE = 'Usage: /voice on or /voice off.';
export const NO_TTS_REPLY =
  '🔇 Voice replies are not available: no text-to-speech model is configured. The bot admin can set HERALD_TTS_MODEL (for example openai:gpt-4o-mini-tts).';

/** The platforms whose egress sends the voice reply as a voice note (OGG/Opus): an audio file elsewhere. */
const VOICE_NOTE_PLATFORMS = new Set(['telegram', 'whatsapp']);

/** What the user gets on their platform: a voice note where there is one, an audio file elsewhere. */
function voiceReplyName(platform: string): string {
  return VOICE_NOTE_PLATFORMS.has(platform) ? 'a voice note' : 'an audio file';
}

export async function voiceCommand(deps: CommandDeps, { command, msg, sessionKey }: CommandInput): Promise<string> {
  const services = deps.conversation;
  const arg = command.args.trim().toLowerCase();
  const available = services.config.ttsModel !== undefined;
  if (arg === '') {
    if (!available) return NO_TTS_REPLY;
    const on = await services.voice.isOn(sessionKey);
    return on
      ? `🔊 Voice replies are on: each answer also comes as ${voiceReplyName(msg.platform)}. /voice off stops them.`
      : '🔇 Voice replies are off. /voice on sends each answer as a voice reply too.';
  }
  if (arg !== 'on' && arg !== 'off') return VOICE_USAGE;
  if (arg === 'on' && !available) return NO_TTS_REPLY;
  await services.voice.set(sessionKey, arg === 'on');
  return arg === 'on' ? `🔊 Voice replies on: each answer also comes as ${voiceReplyName(msg.platform)}. /voice off stops them.` : '🔇 Voice replies off.';
}
