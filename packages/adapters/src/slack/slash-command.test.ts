import { fastify, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, waitFor, type SlackFake, type SlashDelivery } from '../../../../test/fakes/slack/index.js';
import type { InboundMessage } from '../types.js';
import type { SlackIngressOptions } from './config.js';
import { NOT_TAKEN_NOTICE, PRESS_NOT_TAKEN_NOTICE, PRESS_TAKEN_LATE_NOTICE, TAKEN_LATE_NOTICE } from './command-gate.js';
import { blocksWithButtons } from './blocks.js';
import { createSlackIngress, type SlackIngress } from './ingress.js';
import { slashCommandText, slashCommandToMessage } from './slash-command.js';

const logger = pino({ level: 'silent' });
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/**
 * A started ingress on the fake Slack over `transport`, with `extra` options; each message it hands over is recorded,
 * then given to `handOver` (what the gateway does with it).
 */
async function setup(
  transport: 'socket' | 'http',
  extra: Partial<SlackIngressOptions> = {},
  handOver: (m: InboundMessage) => Promise<void> = async () => {},
  fakeOptions: Parameters<typeof startSlackFake>[0] = {},
): Promise<{ fake: SlackFake; received: InboundMessage[] }> {
  const fake = await startSlackFake(fakeOptions);
  cleanups.push(() => fake.close());
  const received: InboundMessage[] = [];
  const ingress: SlackIngress = createSlackIngress({
    botToken: fake.botToken,
    ...(transport === 'socket' ? { appToken: fake.appToken } : { signingSecret: fake.signingSecret }),
    apiUrl: fake.apiUrl,
    threads: new Set<string>(),
    logger,
    clientOptions: { retryConfig: { retries: 0 } },
    ...extra,
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
    await handOver(m);
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

/**
 * Slash commands over both transports: one that only answers is acknowledged on arrival; one that queues a message
 * (the gateway's table says which) only once its hand-over succeeded within the ack budget — else no ack (HTTP 503,
 * no envelope ack), and the user is told what became of it once the hand-over settles.
 */
/** The ingress's warnings: a refused command is logged when it is decided, which a Socket Mode test waits for. */
const warnings: string[] = [];
const warnLogger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
const REFUSED = 'slack: slash command not acknowledged (its message is not handed over yet)';
const PRESS_REFUSED = 'slack: button press not acknowledged (its message is not handed over yet)';
const COMMANDS = [
  { name: 'status', description: 'status' },
  { name: 'queue', description: 'queue', queues: true as const },
  { name: 'retry', description: 'retry', queues: true as const },
];
/** Short, so a held hand-over outlives it quickly; the fake Slack waits longer for a Socket Mode ack. */
const BUDGET_MS = 400;

/** A hand-over the test settles by hand. */
class Held {
  resolve!: () => void;
  reject!: (err: Error) => void;
  readonly promise = new Promise<void>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
}

describe.each(['http', 'socket'] as const)('Slack slash commands and button presses over %s', (transport) => {
  let fake: SlackFake;
  let received: InboundMessage[];
  let handOver: (m: InboundMessage) => Promise<void>;

  beforeEach(async () => {
    warnings.length = 0;
    handOver = async () => {};
    ({ fake, received } = await setup(transport, { commands: COMMANDS, ackBudgetMs: BUDGET_MS, logger: warnLogger }, (m) => handOver(m), {
      ackTimeoutMs: 5_000,
    }));
  });

  /** Slack was acknowledged: the HTTP status was 200, or the envelope's ack came. */
  async function acked(d: SlashDelivery): Promise<boolean> {
    if (d.response) return d.response.status === 200;
    await fake.socket.waitFor(() => fake.socket.isAcked(d.envelopeId as string), 5_000, 'the envelope ack');
    return true;
  }

  /** Slack was not acknowledged: a non-2xx, or (Socket Mode) the ingress decided so (`refusals` so far) without acking. */
  async function refused(d: SlashDelivery, refusals: number, warning = REFUSED): Promise<boolean> {
    if (d.response) return d.response.status === 503;
    await waitFor(() => warnings.filter((w) => w === warning).length >= refusals, 5_000, 'the refusal');
    return !fake.socket.isAcked(d.envelopeId as string);
  }

  /** A bot message with two of Herald's buttons in `user`'s DM, pressed by the user (the first button). */
  async function press(user: string): Promise<SlashDelivery> {
    const channel = fake.dmChannel(user);
    const blocks = blocksWithButtons(
      'Pick one',
      [
        { label: 'Yes', data: 'pick:yes' },
        { label: 'No', data: 'pick:no' },
      ],
      true,
    );
    const res = await fetch(`${fake.apiUrl}chat.postMessage`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.botToken}`, 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ channel, text: 'Pick one', blocks }),
    });
    const { ts } = (await res.json()) as { ts: string };
    return fake.pressButton({ user, channel, ts, actionId: 'herald_button_0' });
  }

  it('acknowledges a command that only answers on arrival, before the gateway ran it', async () => {
    const held = new Held();
    handOver = () => held.promise;
    const d = await fake.slashCommand({ user: 'U0ANS', text: 'status' });
    expect(await acked(d)).toBe(true);
    expect(received.map((m) => m.text)).toEqual(['/status']);
    held.resolve();
  });

  it('acknowledges a command that queues only after its hand-over succeeded', async () => {
    const order: string[] = [];
    handOver = async () => {
      await new Promise((r) => setImmediate(r));
      order.push('handed over');
    };
    const d = await fake.slashCommand({ user: 'U0Q', text: 'queue after this' });
    expect(await acked(d)).toBe(true);
    order.push('acked');
    expect(order).toEqual(['handed over', 'acked']);
    expect(received.map((m) => m.text)).toEqual(['/queue after this']);
    expect(fake.ephemerals).toEqual([]);
  });

  it('does not acknowledge a command whose hand-over outlives the budget; a retyped one joins it; the user is told once it is taken', async () => {
    const held = new Held();
    handOver = () => held.promise;
    const user = 'U0SLOW';
    const first = await fake.slashCommand({ user, text: 'retry' });
    expect(await refused(first, 1)).toBe(true);
    const again = await fake.slashCommand({ user, text: 'retry' });
    expect(await refused(again, 2)).toBe(true);
    // The retyped command joined the running hand-over: one message reached the gateway.
    expect(received.map((m) => m.text)).toEqual(['/retry']);
    held.resolve();
    await waitFor(() => fake.ephemerals.length === 1, 5_000, 'the notice');
    expect(fake.ephemerals).toEqual([{ channel: fake.dmChannel(user), user, text: TAKEN_LATE_NOTICE }]);
    // Settled and forgotten: the same command typed later is a new message.
    const later = await fake.slashCommand({ user, text: 'retry' });
    expect(await acked(later)).toBe(true);
    expect(received).toHaveLength(2);
  });

  it('tells the user to send it again when the hand-over was given up; an unknown word is a message and queues too', async () => {
    const held = new Held();
    handOver = () => held.promise;
    const user = 'U0FAIL';
    const d = await fake.slashCommand({ user, text: 'what is the weather' });
    expect(await refused(d, 1)).toBe(true);
    expect(received.map((m) => m.text)).toEqual(['/what is the weather']);
    held.reject(new Error('redis: WAIT timed out'));
    await waitFor(() => fake.ephemerals.length === 1, 5_000, 'the notice');
    expect(fake.ephemerals[0]).toMatchObject({ user, text: NOT_TAKEN_NOTICE });
  });

  it('acknowledges a button press only after its hand-over succeeded', async () => {
    const order: string[] = [];
    handOver = async () => {
      await new Promise((r) => setImmediate(r));
      order.push('handed over');
    };
    const d = await press('U0PRESS');
    expect(await acked(d)).toBe(true);
    order.push('acked');
    expect(order).toEqual(['handed over', 'acked']);
    expect(received.map((m) => m.press?.data)).toEqual(['pick:yes']);
  });

  it('does not acknowledge a press whose hand-over outlives the budget; the user is told once it is taken, or to press again', async () => {
    let held = new Held();
    handOver = () => held.promise;
    const user = 'U0PRESSSLOW';
    expect(await refused(await press(user), 1, PRESS_REFUSED)).toBe(true);
    held.resolve();
    await waitFor(() => fake.ephemerals.length === 1, 5_000, 'the notice');
    expect(fake.ephemerals).toEqual([{ channel: fake.dmChannel(user), user, text: PRESS_TAKEN_LATE_NOTICE }]);
    held = new Held();
    expect(await refused(await press(user), 2, PRESS_REFUSED)).toBe(true);
    held.reject(new Error('redis: WAIT timed out'));
    await waitFor(() => fake.ephemerals.length === 2, 5_000, 'the second notice');
    expect(fake.ephemerals[1]).toMatchObject({ user, text: PRESS_NOT_TAKEN_NOTICE });
    expect(received).toHaveLength(2);
  });
});
