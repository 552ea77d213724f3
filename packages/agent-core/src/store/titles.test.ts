import { describe, expect, it } from 'vitest';
import { StoreNotFoundError, TitleInUseError } from './errors.js';
import { useTempStores } from './test-support.js';
import { MAX_TITLE_LENGTH, nextTitleInLineage, sanitizeTitle } from './titles.js';

const temp = useTempStores();

describe('sanitizeTitle', () => {
  it('strips control and zero-width characters and collapses whitespace', () => {
    expect(sanitizeTitle('  My\u200B Pro\u0007ject\uFEFF  ')).toBe('My Project');
    expect(sanitizeTitle('line one\nline\ttwo')).toBe('line one line two');
    expect(sanitizeTitle('a\u200C\u200D\u200E\u200F\u2060b\u0085\u009Fc\u0000d')).toBe('abcd');
    expect(sanitizeTitle('safe\u202Etxt.exe')).toBe('safetxt.exe'); // no right-to-left override tricks
  });

  it('turns empty or invisible-only titles into null', () => {
    expect(sanitizeTitle('')).toBeNull();
    expect(sanitizeTitle('   \n\t ')).toBeNull();
    expect(sanitizeTitle('\u200B\uFEFF\u0001')).toBeNull();
    expect(sanitizeTitle(null)).toBeNull();
  });

  it(`cuts titles to ${MAX_TITLE_LENGTH} characters without splitting an emoji`, () => {
    expect(sanitizeTitle('x'.repeat(150))).toBe('x'.repeat(MAX_TITLE_LENGTH));
    const emojiAtEdge = `${'x'.repeat(MAX_TITLE_LENGTH - 1)}😀tail`;
    expect(sanitizeTitle(emojiAtEdge)).toBe('x'.repeat(MAX_TITLE_LENGTH - 1));
  });
});

describe('nextTitleInLineage', () => {
  it('keeps an unused name and numbers past the highest used one', () => {
    expect(nextTitleInLineage('plan', [])).toBe('plan');
    expect(nextTitleInLineage('plan', ['plan'])).toBe('plan #2');
    expect(nextTitleInLineage('plan', ['plan', 'plan #2', 'plan #7'])).toBe('plan #8');
    expect(nextTitleInLineage('plan #3', ['plan', 'plan #3'])).toBe('plan #4');
    // Look-alikes are not part of the lineage.
    expect(nextTitleInLineage('plan', ['planning #9', 'plan #x', 'Plan #4'])).toBe('plan');
  });
});

describe('titles in the store', () => {
  it('stores the cleaned title and clears it with null or blank text', () => {
    const store = temp.open();
    const { session } = store.getOrCreateSession('k1', { source: 'telegram' });
    expect(store.setTitle(session.id, '  Trip\u200B planning ')).toBe('Trip planning');
    expect(store.getSession(session.id)?.title).toBe('Trip planning');
    expect(store.setTitle(session.id, ' \u200B ')).toBeNull();
    expect(store.getSession(session.id)?.title).toBeNull();
    store.setTitle(session.id, 'again');
    expect(store.setTitle(session.id, null)).toBeNull();
    expect(store.getSession(session.id)?.title).toBeNull();
  });

  it('refuses a title another, unrelated session already has, with a typed error', () => {
    const store = temp.open();
    const a = store.getOrCreateSession('a', { source: 'telegram' }).session;
    const b = store.getOrCreateSession('b', { source: 'slack' }).session;
    store.setTitle(a.id, 'Roadmap');
    expect(() => store.setTitle(b.id, ' Roadmap ')).toThrow(TitleInUseError);
    try {
      store.setTitle(b.id, 'Roadmap');
    } catch (err) {
      expect((err as TitleInUseError).sessionId).toBe(a.id);
    }
    expect(store.getSession(b.id)?.title).toBeNull();
    // Setting a session's own title again is fine.
    expect(store.setTitle(a.id, 'Roadmap')).toBe('Roadmap');
    expect(() => store.setTitle('missing', 'x')).toThrow(StoreNotFoundError);
  });

  it('lets sessions of one compression lineage share a title', () => {
    const store = temp.open();
    const root = store.getOrCreateSession('k', { source: 'cli' }).session;
    store.setTitle(root.id, 'Novel');
    const child = store.startNewSession('k', { source: 'cli', parentSessionId: root.id });
    const grandchild = store.startNewSession('k', { source: 'cli', parentSessionId: child.id });
    expect(store.setTitle(grandchild.id, 'Novel')).toBe('Novel');
    expect(store.setTitle(child.id, 'Novel')).toBe('Novel');
    const stranger = store.startNewSession('other', { source: 'cli' });
    expect(() => store.setTitle(stranger.id, 'Novel')).toThrow(TitleInUseError);
  });

  it('numbers compression continuations and resolves a name to the latest of its lineage', () => {
    const store = temp.open();
    expect(store.nextLineageTitle('Essay')).toBe('Essay');
    const first = store.startNewSession('k', { source: 'discord', title: 'Essay' });
    expect(store.nextLineageTitle('Essay')).toBe('Essay #2');
    const second = store.startNewSession('k', {
      source: 'discord',
      parentSessionId: first.id,
      title: store.nextLineageTitle(first.title!),
    });
    expect(second.title).toBe('Essay #2');
    const third = store.startNewSession('k', {
      source: 'discord',
      parentSessionId: second.id,
      title: store.nextLineageTitle(second.title!),
    });
    expect(third.title).toBe('Essay #3');
    store.startNewSession('k2', { source: 'discord', title: 'Essay draft' });

    expect(store.resolveTitle('Essay')?.id).toBe(third.id);
    expect(store.resolveTitle(' Essay\u200B ')?.id).toBe(third.id);
    expect(store.resolveTitle('Essay #2')?.id).toBe(second.id);
    expect(store.resolveTitle('essay')).toBeNull();
    expect(store.resolveTitle('Nothing')).toBeNull();
  });

  it('lists titled sessions newest first, optionally for one platform', () => {
    const store = temp.open();
    const a = store.startNewSession('a', { source: 'telegram', title: 'Alpha' });
    store.startNewSession('b', { source: 'slack' });
    const c = store.startNewSession('c', { source: 'slack', title: 'Gamma' });
    const d = store.startNewSession('d', { source: 'telegram', title: 'Delta' });
    expect(store.listTitledSessions({ limit: 10 }).map((s) => s.id)).toEqual([d.id, c.id, a.id]);
    expect(store.listTitledSessions({ source: 'telegram', limit: 10 }).map((s) => s.title)).toEqual(['Delta', 'Alpha']);
    expect(store.listTitledSessions({ limit: 1 }).map((s) => s.id)).toEqual([d.id]);
  });

  it('does not create the session when its title is taken', () => {
    const store = temp.open();
    store.startNewSession('a', { source: 'api', title: 'Taken' });
    const before = store.currentSession('b');
    expect(() => store.startNewSession('b', { source: 'api', title: 'Taken' })).toThrow(TitleInUseError);
    expect(store.currentSession('b')).toEqual(before);
    expect(store.listSessions().sessions).toHaveLength(1);
  });
});
