/**
 * A Discord connection that goes quiet is reported as disconnected before discord.js itself notices: Discord ACKs
 * a heartbeat every ~41 s, so silence longer than the limit means the socket is dead. Real discord.js against
 * the stand-in; the limit is shrunk so the test runs in seconds.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startDiscordFake, type DiscordFake } from '../../../../test/fakes/discord/index.js';
import type { PlatformIngress } from '../types.js';
import { createDiscordIngress } from './ingress.js';

const logger = pino({ level: 'silent' });
const SILENCE_LIMIT_MS = 600;

let fake: DiscordFake | null = null;
let ingress: PlatformIngress | null = null;

afterEach(async () => {
  await ingress?.stop();
  ingress = null;
  await fake?.close();
  fake = null;
});

async function start(heartbeatIntervalMs: number): Promise<PlatformIngress> {
  fake = await startDiscordFake({ heartbeatIntervalMs });
  const threads = new Set<string>();
  ingress = createDiscordIngress({
    botToken: fake.token,
    apiUrl: fake.apiRoot,
    threads: { has: (id) => threads.has(id), add: (id) => void threads.add(id) },
    logger,
    silenceLimitMs: SILENCE_LIMIT_MS,
  });
  await ingress.start(async () => undefined);
  return ingress;
}

describe('discord ingress liveness', () => {
  it('stays connected through a quiet spell while heartbeats are acknowledged', async () => {
    const ing = await start(150);
    await new Promise((r) => setTimeout(r, SILENCE_LIMIT_MS * 2.5));
    expect(ing.health()).toMatchObject({ state: 'connected', error: null });
  });

  it('reports disconnected, saying why, when neither events nor heartbeat ACKs arrive within the limit; an event brings it back', async () => {
    // Discord's real interval: no ACK is due for tens of seconds, so after READY the connection is silent.
    const ing = await start(41_250);
    expect(ing.health().state).toBe('connected');
    await vi.waitFor(() => expect(ing.health().state).toBe('disconnected'), { timeout: 5_000, interval: 50 });
    expect(ing.health().error).toMatch(/^no gateway event or heartbeat ACK for \d+ s$/);

    fake!.postUserMessage({ channelId: fake!.fixtures.generalChannelId, author: fake!.fixtures.alice, content: 'anyone there?' });
    await vi.waitFor(() => expect(ing.health().state).toBe('connected'), { timeout: 5_000, interval: 50 });
  });
});
