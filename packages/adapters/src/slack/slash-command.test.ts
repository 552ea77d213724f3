import { fastify, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startSlackFake, waitFor, type SlackFake } from '../../../../test/fakes/slack/index.js';
import type { InboundMessage } from '../types.js';
import { createSlackIngress, type SlackIngress } from './ingress.js';
import { slashCommandText, slashCommandToMessage } from './slash-command.js';

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(transport: 'socket' | 'http'): Promise<{ fake: SlackFake; received: InboundMessage[] }> {
  const fake = await startSlackFake();
  cleanups.push(() => fake.close());
  const received: InboundMessage[] = [];
  const ingress: SlackIngress = createSlackIngress({
    botToken: fake.botToken,
    ...(transport === 'socket' ? { appToken: fake.appToken } : { signingSecret: fake.signingSecret }),
    apiUrl: fake.apiUrl,
    threads: new Set<string>(),
    logger,
    clientOptions: { retryConfig: { retries: 0 } },
  });
  if (transport === 'http') {
    const server: FastifyInstance = fastify();
    ingress.registerRoutes(server);
    await server.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => server.close());
    fake.setEventsUrl(`http://127.0.0.1:${(server.server.address() as { port: number }).port}/slack/events`);
  }
  await ingress.start(async (m) => {
    received.push(m);
  });
  cleanups.push(() => ingress.stop());
  return { fake, received };
}

describe('Slack /herald slash command', () => {
  it('maps `/herald <sub> <args>` to the chat command `/<sub> <args>`, bare /herald to /help', () => {
    expect(slashCommandText('status')).toBe('/status');
    expect(slashCommandText('  queue  buy milk ')).toBe('/queue  buy milk');
    expect(slashCommandText('/stop')).toBe('/stop');
    expect(slashCommandText('')).toBe('/help');
    expect(slashCommandToMessage({ channel_id: 'C1', user_id: 'U1' })).toBeNull();
  });

  it('over Socket Mode: acked, and handed over as a DM command message', async () => {
    const { fake, received } = await setup('socket');
    const sent = await fake.slashCommand({ user: 'U0ALICE', text: 'title Trip to Rome' });
    await waitFor(() => received.length === 1, 5_000, 'the slash command');
    await fake.socket.waitFor(() => fake.socket.isAcked(sent.envelopeId ?? ''), 5_000, 'the ack');
    expect(received[0]).toMatchObject({
      platform: 'slack',
      chatType: 'dm',
      chatId: fake.dmChannel('U0ALICE'),
      conversationId: `slack:${fake.dmChannel('U0ALICE')}`,
      userId: 'U0ALICE',
      userName: 'u0alice',
      text: '/title Trip to Rome',
      platformMessageId: sent.fields.trigger_id,
    });
  });

  it('over Events HTTP: answered 200 at once; in a channel it is a per-user channel command', async () => {
    const { fake, received } = await setup('http');
    const sent = await fake.slashCommand({ user: 'U0BOB', text: '', channel: 'C0GENERAL' });
    expect(sent.response?.status).toBe(200);
    await waitFor(() => received.length === 1, 5_000, 'the slash command');
    expect(received[0]).toMatchObject({ chatType: 'channel', chatId: 'C0GENERAL', conversationId: 'slack:C0GENERAL', userId: 'U0BOB', text: '/help' });
    // Another slash command (a different one, e.g. /other) is not ours.
    await fake.slashCommand({ user: 'U0BOB', text: 'x', command: '/other' });
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toHaveLength(1);
  });
});
