/** The OpenAI stand-in's /v1/audio/speech through the real `openai` SDK. */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMp3 } from '../media/mp3.js';
import { readOgg } from '../media/ogg.js';
import { SPEECH_MAX_INPUT, startFakeOpenAI, type FakeLLM } from './index.js';

let llm: FakeLLM;
let client: OpenAI;

beforeAll(async () => {
  llm = await startFakeOpenAI({ apiKey: 'sk-speech' });
  client = new OpenAI({ apiKey: 'sk-speech', baseURL: llm.url, maxRetries: 0 });
});

afterAll(async () => {
  await llm.close();
});

const speak = async (params: OpenAI.Audio.SpeechCreateParams) => {
  const res = await client.audio.speech.create(params);
  return { type: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()) };
};

describe('OpenAI stand-in: text to speech', () => {
  it('opus is an Ogg Opus stream (valid CRCs) as long as the text takes to say', async () => {
    const text = 'Hello there, this is a voice reply from the stand-in.'; // 53 characters: about 3.5 s
    const { type, data } = await speak({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: text, response_format: 'opus' });
    expect(type).toBe('audio/opus');
    const ogg = readOgg(data);
    expect(ogg).toMatchObject({ opus: true, crcOk: true });
    expect(ogg?.durationSec).toBeCloseTo(text.length / 15, 1);
    expect(llm.speech?.requests().at(-1)?.body).toMatchObject({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: text });
  });

  it('mp3 is the default format', async () => {
    const { type, data } = await speak({ model: 'tts-1', voice: 'nova', input: 'short' });
    expect(type).toBe('audio/mpeg');
    expect(isMp3(data)).toBe(true);
  });

  it('refuses what the API refuses: input over 4096 characters, an unknown voice, a wrong key', async () => {
    const tooLong = await speak({ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(SPEECH_MAX_INPUT + 1) }).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(OpenAI.BadRequestError);
    expect((tooLong as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('string_above_max_length');
    await expect(speak({ model: 'tts-1', voice: 'robot', input: 'hi' })).rejects.toThrow(/Invalid value for 'voice'/);
    const stranger = new OpenAI({ apiKey: 'sk-wrong', baseURL: llm.url, maxRetries: 0 });
    await expect(stranger.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('an injected 429 carries retry-after', async () => {
    llm.speech?.failNext({ status: 429, retryAfter: 7 });
    const err = await speak({ model: 'tts-1', voice: 'alloy', input: 'hi' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).headers?.get('retry-after')).toBe('7');
  });
});
