import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../loop/scripted-provider.js';
import { STORE_BACKENDS, useTempStores } from '../store/test-support.js';
import type { SessionStore } from '../store/session-store.js';
import { createSessionSearchTool, SESSION_SEARCH_TOOL } from './session-search.js';
import { createBuiltinTools } from './index.js';

describe.each(STORE_BACKENDS)('session-search on %s', (backend) => {
  const temp = useTempStores(backend);
  const signal = new AbortController().signal;

  async function session(store: SessionStore, key: string, userId: string, title: string | null, texts: string[], source: 'telegram' | 'slack' = 'telegram') {
    const s = await store.startNewSession(key, { source, userId });
    if (title) await store.setTitle(s.id, title);
    await store.appendMessages(
      s.id,
      texts.map((content, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content }) as const),
    );
    return s.id;
  }

  async function seed() {
    const store = await temp.open();
    const trip = await session(store, 'k:a1', '1', 'Lisbon trip', ['Plan a trip to Lisbon in May', 'Lisbon in May is lovely']);
    const work = await session(store, 'k:a2', '1', null, ['Fix the Lisbon server config', 'Done']);
    const bob = await session(store, 'k:b1', '2', 'Bob in Lisbon', ['My secret Lisbon address is 12 Rua X', 'Saved']);
    const slack = await session(store, 'k:s1', '1', null, ['Lisbon on slack', 'ok'], 'slack');
    const current = await session(store, 'k:a3', '1', null, ['search Lisbon please']);
    return { store, trip, work, bob, slack, current };
  }

  describe('session_search tool', () => {
    it("finds the user's own earlier conversations, with titles and dates, and never another user's", async () => {
      const { store, current } = await seed();
      const tool = createSessionSearchTool({ store });
      const out = await tool.execute({ query: 'Lisbon' }, { signal, platform: 'telegram', userId: '1', sessionId: current });
      const day = new Date().toISOString().slice(0, 10);
      expect(out).toMatch(/^3 matches in 2 earlier conversations \(best first\):/);
      expect(out).toContain(`"Lisbon trip" · started ${day} · telegram`);
      expect(out).toContain(`(untitled) · started ${day} · telegram`);
      expect(out).toContain(`user (${day}): Plan a trip to >>>Lisbon<<< in May`);
      expect(out).toContain('>>>Lisbon<<< server config');
      // Bob's session, the same user id on Slack, and the conversation at hand are all left out.
      expect(out).not.toMatch(/secret|Bob|slack|search Lisbon/);
      const asBob = await tool.execute({ query: 'Lisbon' }, { signal, platform: 'telegram', userId: '2' });
      expect(asBob).toContain('secret');
      expect(asBob).not.toContain('trip');
    });

    it('says plainly when nothing matches, and refuses to search without knowing whose conversations', async () => {
      const { store } = await seed();
      const tool = createSessionSearchTool({ store });
      expect(await tool.execute({ query: 'Tokyo' }, { signal, platform: 'telegram', userId: '1' })).toBe(
        'No earlier conversation of this user mentions "Tokyo".',
      );
      await expect(tool.execute({ query: 'Lisbon' }, { signal })).rejects.toThrow(/no user is known/);
    });

    it('ignores matches that are only in a saved-notes block, and its own earlier results', async () => {
      const store = await temp.open();
      await session(store, 'k:1', '1', null, ['<memory>\nLikes Lisbon\n</memory>\n\nhello', 'hi']);
      const s = await store.startNewSession('k:2', { source: 'telegram', userId: '1' });
      await store.appendMessages(s.id, [
        { role: 'user', content: 'find it' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'session_search', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', tool_name: 'session_search', content: 'Lisbon trip found' },
      ]);
      const out = await createSessionSearchTool({ store }).execute({ query: 'Lisbon' }, { signal, platform: 'telegram', userId: '1' });
      expect(out).toBe('No earlier conversation of this user mentions "Lisbon".');
    });

    it('condenses the matches with the provider when asked to summarize', async () => {
      const { store } = await seed();
      const provider = new ScriptedProvider().script({ text: 'You planned a May trip to Lisbon.' });
      const tool = createSessionSearchTool({ store, provider });
      const out = await tool.execute({ query: 'Lisbon trip', summarize: true }, { signal, platform: 'telegram', userId: '1' });
      expect(out).toBe('You planned a May trip to Lisbon.\n\n(Summarised from 1 match in 1 earlier conversation.)');
      expect(provider.calls[0].tools).toEqual([]);
      expect(provider.calls[0].messages[0].content).toContain('Query: Lisbon trip');
      expect(provider.calls[0].messages[0].content).not.toContain('secret');
    });

    it('summarises with the side-task model when the caller gives one, not the conversation model', async () => {
      const { store } = await seed();
      const main = new ScriptedProvider('main-model');
      const side = new ScriptedProvider('side-model').script({ text: 'A May trip to Lisbon.' });
      const tool = createBuiltinTools({ store, provider: main, sideProvider: side }, ['research']).tools.find((t) => t.name === SESSION_SEARCH_TOOL)!;
      const out = await tool.execute({ query: 'Lisbon trip', summarize: true }, { signal, platform: 'telegram', userId: '1' });
      expect(out).toMatch(/^A May trip to Lisbon\./);
      expect(side.calls).toHaveLength(1);
      expect(main.calls).toHaveLength(0);
    });

    it("summarises with the turn's side-task chain from the tool context (metered there) over the one it was built with", async () => {
      const { store } = await seed();
      const built = new ScriptedProvider('side-model');
      const turns = new ScriptedProvider('side-model').script({ text: 'Lisbon, in May.' });
      const tool = createBuiltinTools({ store, sideProvider: built }, ['research']).tools.find((t) => t.name === SESSION_SEARCH_TOOL)!;
      const out = await tool.execute({ query: 'Lisbon trip', summarize: true }, { signal, platform: 'telegram', userId: '1', sideProvider: turns });
      expect(out).toMatch(/^Lisbon, in May\./);
      expect(turns.calls).toHaveLength(1);
      expect(built.calls).toHaveLength(0);
    });
  });
});
