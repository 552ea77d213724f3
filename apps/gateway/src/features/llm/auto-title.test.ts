/**
 * Titles as a side task, through the real openai SDK and a real store: the model's line is cleaned and set; a
 * title the user set meanwhile stays; a title in use elsewhere and a failing model leave the session untitled
 * without an error reaching anyone.
 */
import { createProvider, type SessionStore, type Provider } from '@herald/agent-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../../../../../test/fakes/llm/index.js';
import { useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { createLogger } from '../../support/logger.js';
import { TITLE_SYSTEM_PROMPT, autoTitleEnabled, titleNewSession } from './auto-title.js';

const temp = useTempStores('sqlite');
const log = createLogger({ level: 'silent' });
let llm: FakeLLM;
let provider: Provider;
let store: SessionStore;
beforeEach(async () => {
  llm = await startFakeOpenAI();
  provider = createProvider({ provider: 'openai', model: 'gpt-4.1-nano', apiKey: 'sk-title', baseUrl: llm.url });
  store = await temp.open();
});
afterEach(async () => {
  await llm.close();
});

async function newSession(key: string): Promise<string> {
  return (await store.getOrCreateSession(key, { source: 'telegram', userId: '42' })).session.id;
}

const title = (sessionId: string) =>
  titleNewSession({ store, provider, sessionId, userText: 'how long should sourdough proof overnight?', reply: 'About 12 hours in the fridge.', log });

describe('conversation titles', () => {
  it('names the session from its first exchange, cleaned of quotes, prefix and full stop', async () => {
    const id = await newSession('k:1');
    llm.script({ text: 'Title: "Overnight sourdough proofing."\nextra line' });
    expect(await title(id)).toBe('Overnight sourdough proofing');
    expect((await store.getSession(id))?.title).toBe('Overnight sourdough proofing');
    const sent = llm.requests[0]!.body as { messages: Array<{ role: string; content: string }>; max_tokens?: number };
    expect(sent.messages[0]).toEqual({ role: 'system', content: TITLE_SYSTEM_PROMPT });
    expect(sent.messages[1]!.content).toBe('User: how long should sourdough proof overnight?\n\nAssistant: About 12 hours in the fridge.');
  });

  it('never replaces a title the user set meanwhile, and skips one another conversation has', async () => {
    const mine = await newSession('k:2');
    await store.setTitle(mine, 'Bread');
    llm.script({ text: 'Sourdough timing' });
    expect(await title(mine)).toBeNull();
    expect((await store.getSession(mine))?.title).toBe('Bread');

    const other = await newSession('k:3');
    llm.script({ text: 'Bread' });
    expect(await title(other)).toBeNull();
    expect((await store.getSession(other))?.title).toBeNull();
  });

  it('a failing model or an empty answer leaves the session untitled and never throws', async () => {
    const id = await newSession('k:4');
    llm.script({ error: { status: 500 } }, { text: '  "" ' });
    expect(await title(id)).toBeNull();
    expect(await title(id)).toBeNull();
    expect((await store.getSession(id))?.title).toBeNull();
  });

  it('is on when set, or by default when a side-task model is configured', () => {
    expect(autoTitleEnabled({ autoTitle: undefined, auxiliaryModel: undefined })).toBe(false);
    expect(autoTitleEnabled({ autoTitle: undefined, auxiliaryModel: 'openai:gpt-4.1-nano' })).toBe(true);
    expect(autoTitleEnabled({ autoTitle: false, auxiliaryModel: 'openai:gpt-4.1-nano' })).toBe(false);
    expect(autoTitleEnabled({ autoTitle: true, auxiliaryModel: undefined })).toBe(true);
  });
});
