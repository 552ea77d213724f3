import { describe, expect, it } from 'vitest';
import { FallbackState, ProviderChain } from './fallback.js';
import { ScriptedProvider } from '../loop/scripted-provider.js';

const MINUTE = 60_000;

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('FallbackState', () => {
  it('cools a provider down for 60 s after a 429, doubling per consecutive 429, capped at 4 h', () => {
    const c = clock();
    const state = new FallbackState({ now: c.now });
    const p = new ScriptedProvider('m1');
    state.recordRateLimit(p);
    expect(state.cooldownRemainingMs(p)).toBe(MINUTE);
    state.recordRateLimit(p);
    expect(state.cooldownRemainingMs(p)).toBe(2 * MINUTE);
    for (let i = 0; i < 20; i++) state.recordRateLimit(p);
    expect(state.cooldownRemainingMs(p)).toBe(4 * 60 * MINUTE);
    c.advance(4 * 60 * MINUTE);
    expect(state.cooldownRemainingMs(p)).toBe(0);
  });

  it('a success resets the doubling; a longer Retry-After wins over the base cooldown', () => {
    const c = clock();
    const state = new FallbackState({ now: c.now });
    const p = new ScriptedProvider('m1');
    state.recordRateLimit(p);
    state.recordSuccess(p);
    expect(state.cooldownRemainingMs(p)).toBe(0);
    state.recordRateLimit(p, 5 * MINUTE);
    expect(state.cooldownRemainingMs(p)).toBe(5 * MINUTE);
  });
});

describe('ProviderChain', () => {
  it('starts from the primary unless it is cooling down, and walks the fallbacks in order', () => {
    const c = clock();
    const state = new FallbackState({ now: c.now });
    const [a, b, d] = [new ScriptedProvider('a'), new ScriptedProvider('b'), new ScriptedProvider('d')];
    expect(new ProviderChain([a, b, d], state).current).toBe(a);

    state.recordRateLimit(a);
    const chain = new ProviderChain([a, b, d], state);
    expect(chain.current).toBe(b);
    expect(chain.skippedAtStart).toEqual([{ provider: a, remainingMs: MINUTE }]);
    expect(chain.advance()).toBe(d);
    expect(chain.advance()).toBeUndefined();

    c.advance(MINUTE);
    expect(new ProviderChain([a, b, d], state).current).toBe(a);
  });

  it('when every provider is cooling down, uses the one that is free soonest', () => {
    const c = clock();
    const state = new FallbackState({ now: c.now });
    const [a, b] = [new ScriptedProvider('a'), new ScriptedProvider('b')];
    state.recordRateLimit(a, 10 * MINUTE);
    state.recordRateLimit(b);
    expect(new ProviderChain([a, b], state).current).toBe(b);
  });
});
