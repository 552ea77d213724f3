/**
 * Slash commands over both transports: one that only answers is acknowledged on arrival; one that queues a message
 * (the gateway's table says which) only once its hand-over succeeded within the ack budget — else no ack (HTTP 503,
 * no envelope ack), and the user is told what became of it once the hand-over settles.
 */
import { fastify, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, waitFor, type SlackFake, type SlashDelivery } from '../../../../test/fakes/slack/index.js';
import type { InboundMessage } from '../types.js';
import { NOT_TAKEN_NOTICE, TAKEN_LATE_NOTICE } from './command-gate.js';
import { createSlackIngress, type SlackIngress } from './ingress.js';

/** The ingress's warnings: a refused command is logged when it is decided, which a Socket Mode test waits for. */
const warnings: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
const REFUSED = 'slack: slash command not acknowledged (its message is not handed over yet)';
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

describe.each(['http', 'socket'] as const)('Slack slash commands over %s', (transport) => {
  let fake: SlackFake;
  let server: FastifyInstance | null = null;
  let ingress: SlackIngress;
  let received: InboundMessage[];
  let handOver: (m: InboundMessage) => Promise<void>;

  beforeEach(async () => {
    fake = await startSlackFake({ ackTimeoutMs: 5_000 });
    received = [];
    warnings.length = 0;
    handOver = async () => {};
    ingress = createSlackIngress({
      botToken: fake.botToken,
      ...(transport === 'socket' ? { appToken: fake.appToken } : { signingSecret: fake.signingSecret }),
      apiUrl: fake.apiUrl,
      threads: new Set<string>(),
      logger,
      clientOptions: { retryConfig: { retries: 0 } },
      commands: COMMANDS,
      ackBudgetMs: BUDGET_MS,
    });
    if (transport === 'http') {
      server = fastify();
      ingress.registerRoutes(server);
      await server.listen({ port: 0, host: '127.0.0.1' });
      const { port } = server.server.address() as { port: number };
      fake.setEventsUrl(`http://127.0.0.1:${port}/slack/events`);
    }
    await ingress.start(async (m) => {
      received.push(m);
      await handOver(m);
    });
  });

  afterEach(async () => {
    await ingress.stop();
    await server?.close();
    server = null;
    await fake.close();
  });

  /** Slack was acknowledged: the HTTP status was 200, or the envelope's ack came. */
  async function acked(d: SlashDelivery): Promise<boolean> {
    if (d.response) return d.response.status === 200;
    await fake.socket.waitFor(() => fake.socket.isAcked(d.envelopeId as string), 5_000, 'the envelope ack');
    return true;
  }

  /** Slack was not acknowledged: a non-2xx, or (Socket Mode) the ingress decided so (`refusals` so far) without acking. */
  async function refused(d: SlashDelivery, refusals: number): Promise<boolean> {
    if (d.response) return d.response.status === 503;
    await waitFor(() => warnings.filter((w) => w === REFUSED).length >= refusals, 5_000, 'the refusal');
    return !fake.socket.isAcked(d.envelopeId as string);
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
});
