import { RateLimitedError, type PlatformEgress } from '@herald/adapters';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ChatOutlet } from './live-message.js';

const log = pino({ level: 'silent' });
const egress = { platform: 'discord' } as PlatformEgress;

describe('ChatOutlet', () => {
  it('spaces edits of one chat by its interval', async () => {
    const out = new ChatOutlet(egress, 'discord:101', 60_000, log);
    expect(out.delayUntilEdit()).toBe(0);
    out.spend();
    expect(out.delayUntilEdit()).toBeGreaterThan(59_000);
  });

  it('after a rate limit, the next edit of the chat waits as long as the platform said, and the failure stays out of the turn', async () => {
    const out = new ChatOutlet(egress, 'discord:102', 1_000, log);
    await expect(
      out.run('editing', async () => {
        throw new RateLimitedError('discord', 120_000);
      }),
    ).resolves.toBeUndefined();
    expect(out.delayUntilEdit()).toBeGreaterThan(119_000);
    // Another chat is not held back.
    expect(new ChatOutlet(egress, 'discord:103', 1_000, log).delayUntilEdit()).toBe(0);
  });
});
