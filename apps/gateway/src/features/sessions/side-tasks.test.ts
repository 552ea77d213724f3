/**
 * Side-task models from the configuration, through the real openai SDK against the stand-ins: the auxiliary model
 * and its fallbacks come first and hand a 402 on to the next model, the conversation's own chain follows; image
 * descriptions take only models that can see; bad settings stop start-up naming the variable.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../../../../../test/fakes/llm/index.js';
import { ConfigError, loadConfig } from '../../support/config/load.js';
import { ProviderCatalog } from '../../support/config/providers.js';
import { SessionModelError, SessionModels, SideTaskModels, type SideTaskOptions } from './models.js';

let cheap: FakeLLM;
let backup: FakeLLM;
let main: FakeLLM;
beforeEach(async () => {
  [cheap, backup, main] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI()]);
});
afterEach(async () => {
  await Promise.all([cheap.close(), backup.close(), main.close()]);
});

function sideTasks(env: Record<string, string>, opts: SideTaskOptions = {}): SideTaskModels {
  const config = loadConfig({
    file: null,
    env: {
      HERALD_MODEL: 'openai:gpt-4.1',
      HERALD_FALLBACK_MODELS: 'openai:gpt-4o',
      OPENAI_BASE_URL: main.url,
      OPENAI_API_KEY: 'sk-main-key',
      HERALD_ENDPOINTS: JSON.stringify([
        { name: 'cheap', base_url: cheap.url, api_keys: ['sk-cheap-key'] },
        { name: 'backup', base_url: backup.url },
      ]),
      ...env,
    },
  });
  const catalog = new ProviderCatalog(config);
  return new SideTaskModels(config, new SessionModels(config, catalog), catalog, opts);
}

function summaryRequest() {
  return { systemPrompt: 'Summarise.', messages: [{ role: 'user' as const, content: 'a long middle' }], tools: [], signal: new AbortController().signal };
}

describe('side-task models', () => {
  it('the auxiliary model answers side tasks; a 402 hands the request to its fallback, then to the conversation models', async () => {
    const fallbacks: string[] = [];
    const side = sideTasks(
      { HERALD_AUXILIARY_MODEL: 'cheap:gemini-2.5-flash', HERALD_AUXILIARY_FALLBACK_MODELS: 'backup:qwen3-8b' },
      { onFallback: (e) => fallbacks.push(`${e.from.name}:${e.from.model} -> ${e.to.name}:${e.to.model} (${e.error.status})`) },
    );
    const chain = side.forSession(null, 'compression')!;
    cheap.script({ text: 'cheap summary' }, { error: { status: 402 } }, { error: { status: 402 } });
    backup.script({ text: 'backup summary' }, { error: { status: 503 } });
    main.script({ text: 'main summary' });

    expect((await chain.complete(summaryRequest())).message.content).toBe('cheap summary');
    expect((await chain.complete(summaryRequest())).message.content).toBe('backup summary');
    expect((await chain.complete(summaryRequest())).message.content).toBe('main summary');
    expect(main.requests.map((r) => r.body.model)).toEqual(['gpt-4.1']);
    expect(fallbacks).toEqual([
      'cheap:gemini-2.5-flash -> backup:qwen3-8b (402)',
      'cheap:gemini-2.5-flash -> backup:qwen3-8b (402)',
      'backup:qwen3-8b -> openai:gpt-4.1 (503)',
    ]);
  });

  it('keeps at most 32 session models built and 32 chains a task, whatever models sessions pick with /model', () => {
    const side = sideTasks({});
    for (let i = 0; i < 100; i++) expect(side.forSession(`backup:model-${i}`, 'title')?.model).toBe(`model-${i}`);
    // Private, read for this check only: what the process keeps after a hundred different picks.
    const kept = side as unknown as { built: Map<string, unknown>; chains: Record<string, Map<unknown, unknown>> };
    expect(kept.built.size).toBeLessThanOrEqual(32);
    expect(kept.chains.title.size).toBeLessThanOrEqual(32);
    // The newest pick is still served from what is kept.
    expect(side.forSession('backup:model-99', 'title')).toBe(side.forSession('backup:model-99', 'title'));
  });

  it("without an auxiliary model, side tasks run on the session's own model, then HERALD_MODEL and its fallbacks", async () => {
    const chain = sideTasks({}).forSession('backup:llama3.1:8b', 'title')!;
    expect(`${chain.name}:${chain.model}`).toBe('backup:llama3.1:8b');
    backup.script({ error: { status: 500 } });
    main.script({ error: { status: 404 } }, { text: 'from the fallback' });
    expect((await chain.complete(summaryRequest())).message.content).toBe('from the fallback');
    expect(main.requests.map((r) => r.body.model)).toEqual(['gpt-4.1', 'gpt-4o']);
    // A session model this process cannot build is skipped, not fatal.
    const skipped = sideTasks({}).forSession('nowhere:some-model', 'search')!;
    expect(`${skipped.name}:${skipped.model}`).toBe('openai:gpt-4.1');
  });

  it('one chain per task (I14): each task its own model and fallbacks, then the shared side-task chain; an unset task runs on the shared one', async () => {
    const side = sideTasks({
      HERALD_AUXILIARY_MODEL: 'cheap:gemini-2.5-flash',
      HERALD_COMPRESSION_MODEL: 'backup:qwen3-8b',
      HERALD_COMPRESSION_FALLBACK_MODELS: 'backup:qwen3-32b',
      HERALD_TITLE_MODEL: 'backup:llama3.1:8b',
    });
    const first = (task: 'compression' | 'title' | 'search') => {
      const chain = side.forSession(null, task)!;
      return `${chain.name}:${chain.model}`;
    };
    expect([first('compression'), first('title'), first('search')]).toEqual(['backup:qwen3-8b', 'backup:llama3.1:8b', 'cheap:gemini-2.5-flash']);
    // The compression chain: its model, its own fallback, then the shared auxiliary model, then the conversation's.
    backup.script({ error: { status: 402 } }, { error: { status: 503 } });
    cheap.script({ error: { status: 402 } });
    main.script({ text: 'from the conversation model' });
    expect((await side.forSession(null, 'compression')!.complete(summaryRequest())).message.content).toBe('from the conversation model');
    expect(backup.requests.map((r) => r.body.model)).toEqual(['qwen3-8b', 'qwen3-32b']);
    expect(cheap.requests.map((r) => r.body.model)).toEqual(['gemini-2.5-flash']);
    // A title failing on its own model goes to the shared chain, not to the compression models.
    backup.script({ error: { status: 402 } });
    cheap.script({ text: 'A title' });
    expect((await side.forSession(null, 'title')!.complete(summaryRequest())).message.content).toBe('A title');
    expect(backup.requests.map((r) => r.body.model)).toEqual(['qwen3-8b', 'qwen3-32b', 'llama3.1:8b']);
    expect(() => sideTasks({ HERALD_TITLE_FALLBACK_MODELS: 'backup:qwen3-8b' })).toThrow(/^HERALD_TITLE_FALLBACK_MODELS: set HERALD_TITLE_MODEL too/);
  });

  it('a chain is made once per task and session model, and the same one is handed out after that', () => {
    const side = sideTasks({ HERALD_AUXILIARY_MODEL: 'cheap:gemini-2.5-flash', HERALD_TITLE_MODEL: 'backup:llama3.1:8b' });
    const compression = side.forSession('backup:qwen3-8b', 'compression');
    expect(side.forSession('backup:qwen3-8b', 'compression')).toBe(compression);
    expect(side.forSession(null, 'compression')).not.toBe(compression);
    expect(side.forSession('backup:qwen3-8b', 'title')).not.toBe(compression);
    expect(side.forSession(null, 'search')).toBe(side.forSession(null, 'search'));
  });

  it('image descriptions: the vision model first, then the auxiliary models that can see; none without either', async () => {
    expect(sideTasks({}).describer()).toBeNull();
    // qwen3-8b cannot see (not in the model table): it describes nothing.
    expect(sideTasks({ HERALD_AUXILIARY_MODEL: 'backup:qwen3-8b' }).describer()).toBeNull();
    const describer = sideTasks({ HERALD_VISION_MODEL: 'backup:llava', HERALD_AUXILIARY_MODEL: 'cheap:gpt-4.1-mini' }).describer()!;
    expect([describer.name, describer.model, describer.vision]).toEqual(['backup', 'llava', true]);
    backup.script({ error: { status: 402 } });
    cheap.script({ text: 'a red square' });
    const image = { mimeType: 'image/png', data: 'iVBORw0KGgo=' };
    const result = await describer.complete({ ...summaryRequest(), messages: [{ role: 'user', content: 'describe', images: [image] }] });
    expect(result.message.content).toBe('a red square');
    expect(JSON.stringify(cheap.requests[0]!.body.messages)).toContain('data:image/png;base64,iVBORw0KGgo=');
    // HERALD_VISION_FALLBACK_MODELS: tried after the vision model, before the auxiliary ones.
    const chain = sideTasks({ HERALD_VISION_MODEL: 'backup:llava', HERALD_VISION_FALLBACK_MODELS: 'openai:llava-next' }).describer()!;
    backup.script({ error: { status: 402 } });
    main.script({ text: 'a blue circle' });
    expect((await chain.complete({ ...summaryRequest(), messages: [{ role: 'user', content: 'describe', images: [image] }] })).message.content).toBe(
      'a blue circle',
    );
    expect(main.requests.map((r) => r.body.model)).toEqual(['llava-next']);
  });

  it("refuses auxiliary fallbacks without an auxiliary model, and an auxiliary model without its provider's settings", () => {
    expect(() => sideTasks({ HERALD_AUXILIARY_FALLBACK_MODELS: 'backup:qwen3-8b' })).toThrow(ConfigError);
    expect(() => sideTasks({ HERALD_AUXILIARY_FALLBACK_MODELS: 'backup:qwen3-8b' })).toThrow(
      /^HERALD_AUXILIARY_FALLBACK_MODELS: set HERALD_AUXILIARY_MODEL too/,
    );
    expect(() => sideTasks({ HERALD_AUXILIARY_MODEL: 'anthropic:claude-haiku-4-5' })).toThrow(SessionModelError);
    expect(() => sideTasks({ HERALD_AUXILIARY_MODEL: 'anthropic:claude-haiku-4-5' })).toThrow(/ANTHROPIC_API_KEY: must be set/);
  });
});
