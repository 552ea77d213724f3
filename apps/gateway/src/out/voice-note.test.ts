import { createSpeechSynthesizer, ProviderError } from '@herald/agent-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../../../../test/fakes/llm/index.js';
import { readOgg } from '../../../../test/fakes/media/ogg.js';
import { isMp3 } from '../../../../test/fakes/media/mp3.js';
import { CUT_CAPTION, speakable, voiceNote, VoiceNoteError } from './voice-note.js';

let llm: FakeLLM;
beforeAll(async () => {
  llm = await startFakeOpenAI();
});
afterAll(async () => {
  await llm.close();
});

const speech = () =>
  createSpeechSynthesizer({ provider: { provider: 'openai', model: 'gpt-4o-mini-tts', apiKey: 'sk-test', baseUrl: llm.url }, voice: 'coral' });
const signal = new AbortController().signal;

describe('speakable text', () => {
  it('reads the words, not the Markdown: no marks, no addresses, code left out', () => {
    const md = '## Plan\n**Step one**: see [the docs](https://d.io/x) and `npm test`.\n```ts\nconst x = 1;\n```\n- then *relax* at https://example.com';
    expect(speakable(md)).toEqual({ text: 'Plan\nStep one: see the docs and npm test.\n(code left out)\nthen relax at a link', cut: false });
  });

  it('cuts a long answer at a sentence end within the limit', () => {
    const text = 'One sentence here. '.repeat(300);
    const { text: spoken, cut } = speakable(text, 1000);
    expect(cut).toBe(true);
    expect(spoken.length).toBeLessThanOrEqual(1000);
    expect(spoken.endsWith('.')).toBe(true);
  });
});

describe('voice reply', () => {
  it('Telegram gets an Ogg Opus voice note, the others an MP3; the model and voice are the configured ones', async () => {
    const spoken = await voiceNote('Hello, this is your answer.', 'ogg_opus', speech(), 1_000_000, signal);
    const ogg = spoken.file;
    // Priced by the characters read out, with the speech model.
    expect(spoken.call).toMatchObject({ by: { name: 'openai', model: 'gpt-4o-mini-tts' }, characters: 'Hello, this is your answer.'.length });
    expect(ogg).toMatchObject({ kind: 'voice', name: 'reply.ogg', mimeType: 'audio/ogg' });
    expect(readOgg(ogg.data)).toMatchObject({ opus: true, crcOk: true });
    const mp3 = (await voiceNote('Hello again.', 'mp3', speech(), 1_000_000, signal)).file;
    expect(mp3).toMatchObject({ kind: 'voice', name: 'reply.mp3', mimeType: 'audio/mpeg' });
    expect(isMp3(mp3.data)).toBe(true);
    expect(llm.speech?.requests().map((r) => [r.body.model, r.body.voice, r.body.response_format])).toEqual([
      ['gpt-4o-mini-tts', 'coral', 'opus'],
      ['gpt-4o-mini-tts', 'coral', 'mp3'],
    ]);
  });

  it('a long answer is spoken up to the API limit and says so; a failure or an oversized result is an error', async () => {
    const long = await voiceNote('A sentence to say. '.repeat(400), 'mp3', speech(), 10_000_000, signal);
    expect(long.file.caption).toBe(CUT_CAPTION);
    const input = String(llm.speech?.requests().at(-1)?.body.input);
    expect(input.length).toBeLessThanOrEqual(4096);
    // What was read out is what is priced, not the whole answer.
    expect(long.call.characters).toBe(input.length);
    llm.speech?.failNext({ status: 500 });
    llm.speech?.failNext({ status: 500 }); // the SDK retries once
    await expect(voiceNote('Hi there.', 'mp3', speech(), 1_000_000, signal)).rejects.toBeInstanceOf(ProviderError);
    await expect(voiceNote('Hi there, a bit longer.', 'mp3', speech(), 100, signal)).rejects.toThrow(VoiceNoteError);
    await expect(voiceNote('![](https://example.com/a.png)', 'mp3', speech(), 100, signal)).rejects.toThrow(/nothing to read out/);
  });
});
