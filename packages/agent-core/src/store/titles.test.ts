import { describe, expect, it } from 'vitest';
import { StoreNotFoundError, TitleInUseError } from './errors.js';
import { STORE_BACKENDS, useTempStores } from './test-support.js';
import { MAX_TITLE_LENGTH, nextTitleInLineage, sanitizeTitle } from './titles.js';

describe.each(STORE_BACKENDS)('titles on %s', (backend) => {
  const temp = useTempStores(backend);

  describe('sanitizeTitle', () => {
    it('strips control and zero-width characters and collapses whitespace', async () => {
      expect(sanitizeTitle('  My\u200B Pro\u0007ject\uFEFF  ')).toBe('My Project');
      expect(sanitizeTitle('line one\nline\ttwo')).toBe('line one line two');
      expect(sanitizeTitle('a\u200C\u200D\u200E\u200F\u2060b\u0085\u009Fc\u0000d')).toBe('abcd');
      expect(sanitizeTitle('safe\u202Etxt.exe')).toBe('safetxt.exe'); // no right-to-left override tricks
    });

    it('turns empty or invisible-only titles into null', async () => {
      expect(sanitizeTitle('')).toBeNull();
      expect(sanitizeTitle('   \n\t ')).toBeNull();
      expect(sanitizeTitle('\u200B\uFEFF\u0001')).toBeNull();
      expect(sanitizeTitle(null)).toBeNull();
    });

    it(`cuts titles to ${MAX_TITLE_LENGTH} characters without splitting an emoji`, async () => {
      expect(sanitizeTitle('x'.repeat(150))).toBe('x'.repeat(MAX_TITLE_LENGTH));
      const emojiAtEdge = `${'x'.repeat(MAX_TITLE_LENGTH - 1)}😀tail`;
      expect(sanitizeTitle(emojiAtEdge)).toBe('x'.repeat(MAX_TITLE_LENGTH - 1));
    });
  });

  describe('nextTitleInLineage', () => {
    it('keeps an unused name and numbers past the highest used one', async () => {
      expect(nextTitleInLineage('plan', [])).toBe('plan');
      expect(nextTitleInLineage('plan', ['plan'])).toBe('plan #2');
      expect(nextTitleInLineage('plan', ['plan', 'plan #2', 'plan #7'])).toBe('plan #8');
      expect(nextTitleInLineage('plan #3', ['plan', 'plan #3'])).toBe('plan #4');
      // Look-alikes are not part of the lineage.
      expect(nextTitleInLineage('plan', ['planning #9', 'plan #x', 'Plan #4'])).toBe('plan');
    });
  });

  describe('titles in the store', () => {
    it('stores the cleaned title and clears it with null or blank text', async () => {
      const store = await temp.open();
      const { session } = await store.getOrCreateSession('k1', { source: 'telegram' });
      expect(await store.setTitle(session.id, '  Trip\u200B planning ')).toBe('Trip planning');
      expect((await store.getSession(session.id))?.title).toBe('Trip planning');
      expect(await store.setTitle(session.id, ' \u200B ')).toBeNull();
      expect((await store.getSession(session.id))?.title).toBeNull();
      await store.setTitle(session.id, 'again');
      expect(await store.setTitle(session.id, null)).toBeNull();
      expect((await store.getSession(session.id))?.title).toBeNull();
    });

    it('refuses a title another, unrelated session already has, with a typed error', async () => {
      const store = await temp.open();
      const a = (await store.getOrCreateSession('a', { source: 'telegram' })).session;
      const b = (await store.getOrCreateSession('b', { source: 'slack' })).session;
      await store.setTitle(a.id, 'Roadmap');
      await expect(store.setTitle(b.id, ' Roadmap ')).rejects.toThrow(TitleInUseError);
      try {
        await store.setTitle(b.id, 'Roadmap');
      } catch (err) {
        expect((err as TitleInUseError).sessionId).toBe(a.id);
      }
      expect((await store.getSession(b.id))?.title).toBeNull();
      // Setting a session's own title again is fine.
      expect(await store.setTitle(a.id, 'Roadmap')).toBe('Roadmap');
      await expect(store.setTitle('missing', 'x')).rejects.toThrow(StoreNotFoundError);
    });

    it('lets sessions of one compression lineage share a title', async () => {
      const store = await temp.open();
      const root = (await store.getOrCreateSession('k', { source: 'cli' })).session;
      await store.setTitle(root.id, 'Novel');
      const child = await store.startNewSession('k', { source: 'cli', parentSessionId: root.id });
      const grandchild = await store.startNewSession('k', { source: 'cli', parentSessionId: child.id });
      expect(await store.setTitle(grandchild.id, 'Novel')).toBe('Novel');
      expect(await store.setTitle(child.id, 'Novel')).toBe('Novel');
      const stranger = await store.startNewSession('other', { source: 'cli' });
      await expect(store.setTitle(stranger.id, 'Novel')).rejects.toThrow(TitleInUseError);
    });

    it('numbers compression continuations and resolves a name to the latest of its lineage', async () => {
      const store = await temp.open();
      expect(await store.nextLineageTitle('Essay')).toBe('Essay');
      const first = await store.startNewSession('k', { source: 'discord', title: 'Essay' });
      expect(await store.nextLineageTitle('Essay')).toBe('Essay #2');
      const second = await store.startNewSession('k', {
        source: 'discord',
        parentSessionId: first.id,
        title: await store.nextLineageTitle(first.title!),
      });
      expect(second.title).toBe('Essay #2');
      const third = await store.startNewSession('k', {
        source: 'discord',
        parentSessionId: second.id,
        title: await store.nextLineageTitle(second.title!),
      });
      expect(third.title).toBe('Essay #3');
      await store.startNewSession('k2', { source: 'discord', title: 'Essay draft' });

      expect((await store.resolveTitle('Essay'))?.id).toBe(third.id);
      expect((await store.resolveTitle(' Essay\u200B '))?.id).toBe(third.id);
      expect((await store.resolveTitle('Essay #2'))?.id).toBe(second.id);
      expect(await store.resolveTitle('essay')).toBeNull();
      expect(await store.resolveTitle('Nothing')).toBeNull();
    });

    it('lists titled sessions newest first, optionally for one platform', async () => {
      const store = await temp.open();
      const a = await store.startNewSession('a', { source: 'telegram', title: 'Alpha' });
      await store.startNewSession('b', { source: 'slack' });
      const c = await store.startNewSession('c', { source: 'slack', title: 'Gamma' });
      const d = await store.startNewSession('d', { source: 'telegram', title: 'Delta' });
      expect((await store.listTitledSessions({ limit: 10 })).map((s) => s.id)).toEqual([d.id, c.id, a.id]);
      expect((await store.listTitledSessions({ source: 'telegram', limit: 10 })).map((s) => s.title)).toEqual(['Delta', 'Alpha']);
      expect((await store.listTitledSessions({ limit: 1 })).map((s) => s.id)).toEqual([d.id]);
    });

    it('does not create the session when its title is taken', async () => {
      const store = await temp.open();
      await store.startNewSession('a', { source: 'api', title: 'Taken' });
      const before = await store.currentSession('b');
      await expect(store.startNewSession('b', { source: 'api', title: 'Taken' })).rejects.toThrow(TitleInUseError);
      expect(await store.currentSession('b')).toEqual(before);
      expect((await store.listSessions()).sessions).toHaveLength(1);
    });
  });
});
