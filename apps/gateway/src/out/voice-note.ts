/**
 * A voice reply (/voice on): the reply's text made speakable — Markdown marks, links' addresses and code blocks
 * left out — then spoken by the text-to-speech model (HERALD_TTS_MODEL) in the platform's format: Ogg Opus for a
 * Telegram voice note, MP3 for an audio file on Discord and Slack. The speech API reads 4096 characters at most; a
 * longer answer is spoken up to a sentence end within them, and the voice reply says so in its caption.
 */
import { SPEECH_MAX_INPUT_CHARS, emptyUsage, formatBytes, type NewTurnFile, type SpeechSynthesizer } from '@herald/agent-core';
import type { VoiceFormat } from '@herald/adapters';
import type { ModelCall } from '../features/budgets/meter.js';

export const CUT_CAPTION = 'The voice reply covers the start of the answer; the whole answer is in the text.';

export class VoiceNoteError extends Error {
  override name = 'VoiceNoteError';
}

/** The text as it should be read out, and whether it had to be cut to the speech API's limit. */
export function speakable(markdown: string, maxChars = SPEECH_MAX_INPUT_CHARS): { text: string; cut: boolean } {
  const text = markdown
    .replace(/```[\s\S]*?(?:```|$)/g, ' (code left out) ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/^\s{0,3}#{1,6}\s+/gm, '')
    .replace(/^\s*[-*+]\s+/gm, '')
    .replace(/(\*\*|__|~~|\*|_)(\S(?:.*?\S)?)\1/g, '$2')
    .replace(/https?:\/\/\S+/g, 'a link')
    .replace(/[ \t]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
  if (text.length <= maxChars) return { text, cut: false };
  const head = text.slice(0, maxChars);
  const sentenceEnd = Math.max(head.lastIndexOf('. '), head.lastIndexOf('! '), head.lastIndexOf('? '), head.lastIndexOf('.\n'));
  const cutAt = sentenceEnd > maxChars / 2 ? sentenceEnd + 1 : Math.max(head.lastIndexOf(' '), maxChars / 2);
  return { text: head.slice(0, cutAt).trim(), cut: true };
}

/** The voice reply, and the speech call that made it (no usage reported: billed by the characters read out). */
export interface VoiceNote {
  file: NewTurnFile;
  call: ModelCall;
}

/** Speaks the reply; throws (VoiceNoteError, or the speech provider's error) when there is no voice reply to send. */
export async function voiceNote(reply: string, format: VoiceFormat, speech: SpeechSynthesizer, maxBytes: number, signal: AbortSignal): Promise<VoiceNote> {
  const { text, cut } = speakable(reply);
  if (text === '') throw new VoiceNoteError('the answer has nothing to read out');
  const ogg = format === 'ogg_opus';
  const data = await speech.speak(text, ogg ? 'opus' : 'mp3', signal);
  if (data.length === 0) throw new VoiceNoteError('the speech service returned no audio');
  if (data.length > maxBytes)
    throw new VoiceNoteError(`the voice reply would be ${formatBytes(data.length)}, more than the ${formatBytes(maxBytes)} a file may have`);
  const file: NewTurnFile = {
    kind: 'voice',
    name: ogg ? 'reply.ogg' : 'reply.mp3',
    mimeType: ogg ? 'audio/ogg' : 'audio/mpeg',
    data,
    ...(cut && { caption: CUT_CAPTION }),
  };
  return { file, call: { by: { name: 'openai', model: speech.model }, usage: emptyUsage(), characters: text.length } };
}
