/**
 * Two Telegram webhook ingress processes behind a balancer, one worker, one Redis: Telegram posts a chat's updates one
 * at a time, and the balancer sends them to the two ingresses in turn. The parts of an album and of a split long text
 * reach both processes, and still make one turn with one reply, the parts joined in order: what ingress remembers of
 * the parts it took lives in Redis (apps/gateway/src/edges/ingress/parts-memory.ts), with a TTL on every key.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imagesOf, startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { freePort, waitFor } from './helpers/ports.js';
import { deleteRedisPrefix } from './helpers/redis-keys.js';
import { repliesIn, telegramEnv } from './helpers/telegram.js';
import { testPrefix } from './helpers/test-run.js';

const WEBHOOK_PATH = '/telegram/webhook';
const GROUP = -4_801;
const USER = 4_801;

/** A round-robin balancer in front of the ingresses: each webhook post goes to the next one. */
class Balancer {
  readonly served: number[] = [];
  private next = 0;
  private constructor(private readonly server: Server) {}

  static async start(port: number, targets: () => number[]): Promise<Balancer> {
    const server = createServer();
    const balancer = new Balancer(server);
    server.on('request', (req, res) => {
      void balancer.forward(req, targets()).then(
        ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json' }).end(body),
        () => res.writeHead(502).end(),
      );
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return balancer;
  }

  private async forward(req: IncomingMessage, ports: number[]): Promise<{ status: number; body: string }> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const i = this.next++ % ports.length;
    this.served.push(i);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
    const res = await fetch(`http://127.0.0.1:${ports[i]}${req.url ?? '/'}`, { method: req.method, headers, body: Buffer.concat(chunks) });
    return { status: res.status, body: await res.text() };
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A long text whose first line mentions the bot, and the parts Telegram Desktop sends it as (cut at a line break). */
function splitInGroup(mention: string, length: number): { parts: string[] } {
  const lines = [`${mention} split across ingresses, please read it all:`];
  for (let n = 1; lines.join('\n').length < length; n++) lines.push(`line ${n}: a long question, pasted in one go.`);
  let left = lines.join('\n').slice(0, length).trimEnd();
  const parts: string[] = [];
  while (left.length > 4096) {
    const cut = left.lastIndexOf('\n', 4096);
    parts.push(left.slice(0, cut));
    left = left.slice(cut + 1);
  }
  return { parts: [...parts, left] };
}

describe('telegram webhooks on two ingress processes behind a balancer', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let balancer: Balancer;
  let redis: Redis;
  const procs: GatewayProcess[] = [];
  const prefix = testPrefix('tg-ingresses');
  const dir = mkdtempSync(join(tmpdir(), 'herald-ingresses-'));

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    llm.respondWith((req) => {
      const text = lastUserText(req);
      if (text.includes('album across ingresses')) return { text: 'got the album' };
      if (text.includes('split across ingresses')) return { text: 'got the text' };
      return { text: `ok: ${text}` };
    });
    redis = new Redis('redis://127.0.0.1:6379');
    const [hookPort, portA, portB] = [await freePort(), await freePort(), await freePort()];
    balancer = await Balancer.start(hookPort, () => [portA, portB]);
    const env = telegramEnv(tg, llm, {
      HERALD_DB: join(dir, 'herald.db'),
      HERALD_REDIS_PREFIX: prefix,
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${hookPort}${WEBHOOK_PATH}`,
      TELEGRAM_WEBHOOK_SECRET: 'two-ingresses-secret',
    });
    for (const port of [portA, portB]) procs.push(await startGateway({ env: { ...env, HERALD_PORT: String(port) }, args: ['--role', 'ingress'] }));
    procs.push(await startGateway({ env, args: ['--role', 'worker'] }));
    for (const p of procs.slice(0, 2)) await p.waitForLog((l) => l.msg === 'telegram webhook set', 'the webhook set');
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await balancer?.close();
    await llm?.close();
    await tg?.close();
    await deleteRedisPrefix(prefix);
    redis?.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an album whose parts reach both ingresses is one turn with every picture, one reply', async () => {
    const mention = `@${tg.bot.username}`;
    const before = balancer.served.length;
    tg.injectMessage({ chatId: GROUP, userId: USER, caption: `${mention} album across ingresses`, photo: true, mediaGroupId: 'lb-album' });
    for (let i = 0; i < 3; i++) tg.injectMessage({ chatId: GROUP, userId: USER, photo: true, mediaGroupId: 'lb-album' });
    await waitFor(() => repliesIn(tg, GROUP).length >= 1, { what: 'the album answer' });
    await waitFor(() => tg.pendingUpdates() === 0, { what: 'all parts delivered' });
    // Both ingresses took parts (the later ones without the mention: taken because the first part was).
    expect(new Set(balancer.served.slice(before))).toEqual(new Set([0, 1]));
    const asked = llm.requests.filter((r) => lastUserText(r).includes('album across ingresses'));
    expect(asked).toHaveLength(1);
    expect(imagesOf(asked[0])).toHaveLength(4);
    expect(lastUserText(asked[0])).toContain('[Image: photo 4]');
    expect(repliesIn(tg, GROUP)).toEqual(['got the album']);
  });

  it('a long text split in three parts that reach both ingresses is one turn, the parts joined in order, one reply', async () => {
    const { parts } = splitInGroup(`@${tg.bot.username}`, 10_000);
    expect(parts).toHaveLength(3);
    const before = balancer.served.length;
    for (const text of parts) tg.injectMessage({ chatId: GROUP, userId: USER, text });
    await waitFor(() => repliesIn(tg, GROUP).length >= 2, { what: 'the split text answer' });
    await waitFor(() => tg.pendingUpdates() === 0, { what: 'all parts delivered' });
    expect(new Set(balancer.served.slice(before))).toEqual(new Set([0, 1]));
    const asked = llm.requests.filter((r) => lastUserText(r).includes('split across ingresses'));
    expect(asked).toHaveLength(1);
    const text = lastUserText(asked[0]);
    const at = [parts[0].slice(-40), parts[1].slice(0, 40), parts[1].slice(-40), parts[2].slice(0, 40), parts[2].slice(-40)].map((p) => text.indexOf(p));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((x, y) => x - y)).toEqual(at);
    expect(repliesIn(tg, GROUP)).toEqual(['got the album', 'got the text']);
  });

  it('every key ingress keeps about parts expires; the finished split is forgotten already', async () => {
    const keys = await redis.keys(`${prefix}:parts:*`);
    expect(keys.some((k) => k.includes(':album:'))).toBe(true);
    expect(keys.filter((k) => k.includes(':split:'))).toEqual([]);
    for (const k of keys) expect(await redis.pttl(k), k).toBeGreaterThan(0);
  });
});
