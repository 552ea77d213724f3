/**
 * The webhook answers Meta 200 only once every message of the batch was handed over; a hand-over still running
 * after the answer budget is a 503 (Meta delivers again), and the redelivery joins it instead of starting another.
 */
import { fastify, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { messagesPayload, postWebhook, signWebhook } from '../../../../test/fakes/whatsapp/webhook.js';
import type { InboundMessage } from '../types.js';
import { WhatsAppIngress } from './ingress.js';
import { WhatsAppWebhook } from './webhook.js';

const logger = pino({ level: 'silent' });
const SECRET = 'app-secret';
const NUM = { phoneNumberId: '1001', displayPhone: '15550001001' };

let server: FastifyInstance;
let ingress: WhatsAppIngress;
let url: string;
let received: InboundMessage[];
let handOver: () => Promise<void>;

beforeEach(async () => {
  received = [];
  handOver = async () => {};
  const webhook = new WhatsAppWebhook({ appSecret: SECRET, verifyToken: 'verify', logger, answerWithinMs: 200 });
  ingress = new WhatsAppIngress(webhook, { phoneNumberId: NUM.phoneNumberId, logger, window: { touch: async () => {}, last: async () => null } });
  server = fastify();
  ingress.registerRoutes(server);
  await server.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(server.server.address() as { port: number }).port}/whatsapp/webhook`;
  await ingress.start(async (m) => {
    received.push(m);
    await handOver();
  });
});

afterEach(async () => {
  await ingress.stop();
  await server.close();
});

/** Meta's delivery of one text message (the same id each time: a redelivery). */
async function deliver(id: string, text: string): Promise<number> {
  const message = { from: '15550009999', id, timestamp: String(Math.floor(Date.now() / 1000)), type: 'text', text: { body: text } };
  const raw = JSON.stringify(messagesPayload(NUM, { contacts: [{ profile: { name: 'Ann' }, wa_id: '15550009999' }], messages: [message] }));
  return (await postWebhook(url, raw, signWebhook(SECRET, raw))).status;
}

describe('WhatsApp webhook answer', () => {
  it('503 while the hand-over runs past the budget; the redelivery joins it; 200 once it is taken; handed over once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    handOver = () => held;
    expect(await deliver('wamid.SLOW', 'hello')).toBe(503);
    expect(await deliver('wamid.SLOW', 'hello')).toBe(503);
    release();
    expect(await deliver('wamid.SLOW', 'hello')).toBe(200);
    expect(received.map((m) => m.text)).toEqual(['hello']);
  });

  it('500 when the hand-over failed; the redelivery hands the message over again', async () => {
    handOver = async () => {
      throw new Error('redis away');
    };
    expect(await deliver('wamid.FAIL', 'again')).toBe(500);
    handOver = async () => {};
    expect(await deliver('wamid.FAIL', 'again')).toBe(200);
    expect(await deliver('wamid.FAIL', 'again')).toBe(200);
    expect(received.map((m) => m.text)).toEqual(['again', 'again']);
  });

  it('200 for fields that are objects no string can be made of (type, time, ids); the message skipped or taken, nothing thrown', async () => {
    const noString = { toString: false, valueOf: false };
    const odd = [
      { from: '15550009999', id: 'wamid.ODDTYPE', timestamp: '1', type: noString, text: { body: 'x' } },
      { from: '15550009999', id: 'wamid.ODDTIME', timestamp: noString, type: 'text', text: { body: 'timeless' } },
    ];
    const value = { statuses: [{ id: noString, status: 'failed', errors: [{ code: 1 }] }], messages: odd };
    const raw = JSON.stringify(messagesPayload(NUM, value));
    expect((await postWebhook(url, raw, signWebhook(SECRET, raw))).status).toBe(200);
    expect(received.map((m) => m.text)).toEqual(['timeless']);
    expect(received[0]?.sentAt).toBeGreaterThan(0);
  });
});
