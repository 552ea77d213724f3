/**
 * The fault suite's engine: an ingress and two workers on a private Redis with append-only persistence and a
 * SQLite file or a PostgreSQL database, many Telegram conversations (long polling), WhatsApp conversations (a
 * webhook Meta retries until it gets a 200, as Meta does) and Matrix conversations (a /sync long poll whose
 * position the ingress keeps in Redis) sending messages, and random processes — the ingress included — SIGKILLed
 * and restarted while Redis is killed and restarted, Redis or the database stay away for a while, and the Matrix
 * homeserver stops answering for a while. Afterwards every message must have exactly one answer, in order.
 *
 * Pacing follows events, not the clock: the driver sends a round of messages, does one chaos action, and waits
 * for the replacement process to be up before the next round, so a slow machine only makes the run longer.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng } from '../../packages/agent-core/src/compression/test-support.js';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { type MatrixFake, startMatrixFake, textContent } from '../fakes/matrix/index.js';
import { startTelegramFake, type TelegramFake } from '../fakes/telegram/index.js';
import { startWhatsAppFake, type WhatsAppFake } from '../fakes/whatsapp/index.js';
import { matrixTexts } from '../helpers/matrix.js';
import { whatsappTexts } from '../helpers/whatsapp.js';
import { uniquePrefix } from '../helpers/cluster.js';
import { repliesIn, telegramEnv } from '../helpers/env.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { waitFor } from '../helpers/ports.js';
import { startTestRedis, type TestRedis } from '../helpers/redis-server.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { freshPostgresSchema, TEST_DATABASE_URL } from '../../packages/agent-core/src/store/test-support.js';

export interface ChaosOptions {
  sessions: number;
  /** WhatsApp conversations besides the Telegram ones (default 0). */
  whatsappSessions?: number;
  /** Matrix conversations (one-to-one rooms) besides those (default 0). */
  matrixSessions?: number;
  messagesPerSession: number;
  /** Processes SIGKILLed (and restarted) during the run, spread over the rounds. */
  processKills: number;
  /** Times Redis is SIGKILLed and restarted at once during the run. */
  redisRestarts: number;
  /** Times Redis is SIGKILLed and kept down for `outageMs` while messages keep arriving. */
  redisOutages: number;
  /** PostgreSQL only: times the database vanishes (every connection cut, new ones refused) for `outageMs`. */
  databaseOutages?: number;
  /** Times the Matrix homeserver refuses every connection for `outageMs` (needs matrixSessions). */
  homeserverOutages?: number;
  outageMs: number;
  /** Where sessions live (default sqlite). PostgreSQL is reached through a relay the run can cut. */
  store?: 'sqlite' | 'postgres';
  /** Seed of the pseudo-random choices, so a failing run can be repeated. */
  seed: number;
  log?: (line: string) => void;
}

export interface ChaosReport {
  /** Per chat: the answers the bot sent ('re: …' only), in order. */
  answers: Map<number, string[]>;
  expected: Map<number, string[]>;
  lost: string[];
  duplicated: string[];
  outOfOrder: number[];
  kills: string[];
  /** What the ingress's /health/ready said during each long outage (it must name what is away). */
  readinessDuringOutages: Array<{ down: string; status: number; failed: string[] }>;
  /** Log lines in which a process said a reply may have been sent twice (a crash between send and record). */
  possibleDuplicatesLogged: number;
}

const ROLES = ['ingress', 'worker', 'worker'] as const;
const CHAT_BASE = 7_000;
/** WhatsApp chats are numbered from here; the user is `1555000<chat>`. */
const WA_CHAT_BASE = 9_000;
/** Matrix chats are numbered from here; the user is `@c<chat>:localhost`, in a one-to-one room with the bot. */
const MX_CHAT_BASE = 11_000;
/** How long Meta's stand-in keeps posting one message until the gateway answers it with a 200. */
const WEBHOOK_PATIENCE_MS = 240_000;

const waUser = (chat: number): string => `1555000${chat}`;

/**
 * Meta's side of the webhook: each chat's messages in order, each POSTed (same message id) until a 200, to
 * whichever ingress is up now (a restarted one listens on a new port).
 */
class MetaSender {
  private readonly chains = new Map<number, Promise<void>>();
  private seq = 0;

  constructor(
    private readonly wa: WhatsAppFake,
    private readonly ingressUrl: () => string,
  ) {}

  send(chat: number, text: string): void {
    this.seq += 1;
    const id = `wamid.CHAOS${chat}x${this.seq}`;
    const previous = this.chains.get(chat) ?? Promise.resolve();
    this.chains.set(
      chat,
      previous.then(() => this.untilTaken(chat, text, id)),
    );
  }

  async settled(): Promise<void> {
    await Promise.all(this.chains.values());
  }

  private async untilTaken(chat: number, text: string, id: string): Promise<void> {
    const deadline = Date.now() + WEBHOOK_PATIENCE_MS;
    while (Date.now() < deadline) {
      this.wa.setWebhookUrl(`${this.ingressUrl()}/whatsapp/webhook`);
      const res = await this.wa.text(text, { from: waUser(chat), id }).catch(() => null);
      if (res?.status === 200) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const say = opts.log ?? (() => undefined);
  const random = prng(opts.seed);
  const dir = mkdtempSync(join(tmpdir(), 'herald-chaos-'));
  const prefix = uniquePrefix('chaos');
  const closers: Array<() => Promise<unknown>> = [];
  const everyProcess: GatewayProcess[] = [];
  try {
    // appendfsync always: Redis acknowledges a write only once it is on disk, as a production queue should.
    const redis: TestRedis = await startTestRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir] });
    closers.push(() => redis.stop());
    const tg: TelegramFake = await startTelegramFake();
    closers.push(() => tg.close());
    const wa: WhatsAppFake = await startWhatsAppFake();
    closers.push(() => wa.close());
    const mx: MatrixFake = await startMatrixFake();
    closers.push(() => mx.close());
    const mxRooms = new Map(
      Array.from({ length: opts.matrixSessions ?? 0 }, (_, i) => MX_CHAT_BASE + i).map((c) => [
        c,
        mx.createRoom({ members: [`@c${c}:localhost`], isDirect: true }),
      ]),
    );
    const llm: FakeLLM = await startFakeOpenAI();
    closers.push(() => llm.close());
    // A short think per answer, varied, so kills land in the middle of turns as well as between them.
    llm.respondWith((req) => ({ text: `re: ${lastUserText(req)}`, delayMs: 20 + Math.floor(random() * 150) }));

    const storeEnv: Record<string, string> = { HERALD_DB: join(dir, 'herald.db') };
    let database: Awaited<ReturnType<typeof startTcpProxy>> | null = null;
    if (opts.store === 'postgres') {
      const fresh = await freshPostgresSchema('herald_chaos');
      closers.push(() => fresh.drop());
      const target = new URL(TEST_DATABASE_URL);
      database = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      closers.push(() => database!.close());
      const url = new URL(fresh.url);
      url.port = String(database.port);
      storeEnv.HERALD_DATABASE_URL = url.toString();
    }
    const env = telegramEnv(tg, llm, {
      REDIS_URL: redis.url,
      HERALD_REDIS_PREFIX: prefix,
      ...storeEnv,
      HERALD_BUSY_INPUT_MODE: 'queue',
      HERALD_SESSION_LOCK_MS: '1500',
      HERALD_JOB_LOCK_MS: '1500',
      HERALD_STALLED_INTERVAL_MS: '1000',
      HERALD_JANITOR_INTERVAL_MS: '1000',
      HERALD_USER_RATE_LIMIT: '0',
      HERALD_SESSION_RESET: 'none',
      WHATSAPP_ACCESS_TOKEN: wa.accessToken,
      WHATSAPP_PHONE_NUMBER_ID: wa.phoneNumberId,
      WHATSAPP_APP_SECRET: wa.appSecret,
      WHATSAPP_VERIFY_TOKEN: wa.verifyToken,
      WHATSAPP_API_URL: wa.apiUrl,
      ...(mxRooms.size > 0 && { MATRIX_HOMESERVER_URL: mx.url, MATRIX_ACCESS_TOKEN: mx.accessToken, MATRIX_USER_ID: mx.userId, MATRIX_TOOL_PROGRESS: 'off' }),
    });
    const start = async (role: string): Promise<GatewayProcess> => {
      const gw = await startGateway({ env, args: ['--role', role], dataDir: dir });
      everyProcess.push(gw);
      return gw;
    };
    const procs: GatewayProcess[] = [];
    for (const role of ROLES) procs.push(await start(role));
    closers.push(() => Promise.all(procs.map((p) => p.stop('SIGKILL'))));
    // The Matrix ingress's first /sync only takes the position (what came before is history, never answered):
    // the conversations start once it long-polls from there.
    if (mxRooms.size > 0) await mx.waitFor(() => mx.requestsTo('/sync').some((r) => r.query.since !== undefined), 60_000, 'the Matrix ingress to long-poll');

    const meta = new MetaSender(wa, () => procs[0].url);
    const waChats = new Set(Array.from({ length: opts.whatsappSessions ?? 0 }, (_, i) => WA_CHAT_BASE + i));
    const chats = [...Array.from({ length: opts.sessions }, (_, i) => CHAT_BASE + i), ...waChats, ...mxRooms.keys()];
    const inject = (chat: number, text: string): void => {
      const room = mxRooms.get(chat);
      if (waChats.has(chat)) meta.send(chat, text);
      else if (room) mx.send(room, `@c${chat}:localhost`, textContent(text));
      else tg.injectMessage({ chatId: chat, userId: chat, text });
    };
    const expected = new Map(chats.map((c) => [c, [] as string[]]));
    // Spread the chaos actions over the rounds.
    const actions: Array<'process' | 'redis' | 'outage' | 'db-outage' | 'homeserver'> = [
      ...Array<'process'>(opts.processKills).fill('process'),
      ...Array<'redis'>(opts.redisRestarts).fill('redis'),
      ...Array<'outage'>(opts.redisOutages).fill('outage'),
      ...Array<'db-outage'>(database ? (opts.databaseOutages ?? 0) : 0).fill('db-outage'),
      ...Array<'homeserver'>(mxRooms.size > 0 ? (opts.homeserverOutages ?? 0) : 0).fill('homeserver'),
    ].sort(() => random() - 0.5);
    const readinessDuringOutages: ChaosReport['readinessDuringOutages'] = [];
    const roundsWithAction = new Set<number>();
    while (roundsWithAction.size < Math.min(actions.length, opts.messagesPerSession)) {
      roundsWithAction.add(Math.floor(random() * opts.messagesPerSession));
    }
    const kills: string[] = [];

    for (let round = 0; round < opts.messagesPerSession; round++) {
      for (const chat of chats) {
        const text = `c${chat} m${round}`;
        expected.get(chat)!.push(`re: ${text}`);
        inject(chat, text);
      }
      if (!roundsWithAction.has(round)) {
        // Let some of this round be taken before the next one, so the run has turns in flight throughout.
        await waitFor(() => llm.requests.length >= round * chats.length, { timeoutMs: 60_000, what: `round ${round} under way` });
        continue;
      }
      // Several actions may fall on the last rounds: do them all.
      const due = round === opts.messagesPerSession - 1 ? actions.splice(0) : actions.splice(0, 1);
      for (const action of due) {
        if (action === 'homeserver') {
          say(`round ${round}: Matrix homeserver away for ${opts.outageMs} ms`);
          kills.push('homeserver outage');
          await mx.stop();
          // Users keep writing (their own homeservers take it); the bot sees it once it syncs again.
          for (const chat of mxRooms.keys()) {
            const text = `c${chat} m${round} during homeserver outage`;
            expected.get(chat)!.push(`re: ${text}`);
            inject(chat, text);
          }
          // A deliberate fault duration, not a timed assertion.
          await new Promise((r) => setTimeout(r, opts.outageMs));
          await mx.restart();
          continue;
        }
        if (action === 'outage' || action === 'db-outage') {
          const down = action === 'outage' ? 'redis' : 'postgres';
          say(`round ${round}: ${down} down for ${opts.outageMs} ms`);
          kills.push(`${down} outage`);
          if (action === 'outage') await redis.stop();
          else await database!.cut();
          // The ingress must say so, naming what is away, while it lasts.
          const ingressUrl = procs[0].url;
          readinessDuringOutages.push(
            await waitFor(
              async () => {
                const r = await fetch(`${ingressUrl}/health/ready`);
                const body = (await r.json()) as { failed?: string[] };
                return r.status === 503 && body.failed?.includes(down) ? { down, status: r.status, failed: body.failed } : null;
              },
              { what: `the ingress to report ${down} as not ready` },
            ),
          );
          // Messages keep arriving during the outage.
          for (const chat of chats) {
            const text = `c${chat} m${round} during outage`;
            expected.get(chat)!.push(`re: ${text}`);
            inject(chat, text);
          }
          // A deliberate fault duration, not a timed assertion.
          await new Promise((r) => setTimeout(r, opts.outageMs));
          if (action === 'outage') await redis.start();
          else await database!.restore();
          continue;
        }
        if (action === 'redis') {
          say(`round ${round}: SIGKILL redis`);
          kills.push('redis');
          await redis.stop();
          await redis.start();
          continue;
        }
        const victim = Math.floor(random() * procs.length);
        const role = ROLES[victim];
        say(`round ${round}: SIGKILL ${role} (pid ${procs[victim].proc.pid})`);
        kills.push(role);
        procs[victim].proc.kill('SIGKILL');
        await procs[victim].exited;
        procs[victim] = await start(role);
      }
    }

    // Everything sent must be answered, once each, in order; then one more message per chat proves that
    // nothing earlier is still on its way (turns of a chat run in order).
    const answersOf = (chat: number): string[] => {
      const room = mxRooms.get(chat);
      const texts = waChats.has(chat) ? whatsappTexts(wa, waUser(chat)) : room ? matrixTexts(mx, room) : repliesIn(tg, chat);
      return texts.filter((t) => t.startsWith('re: '));
    };
    const answeredAll = (): boolean => chats.every((c) => new Set(answersOf(c)).size >= expected.get(c)!.length);
    // Generous next to the half minute a short run takes, yet short enough that a stuck message ends in a report
    // (what was lost, the processes' logs) well inside the test's own time limit.
    await waitFor(answeredAll, { timeoutMs: 120_000, intervalMs: 200, what: 'every message to be answered' }).catch(() => undefined);
    for (const chat of chats) {
      const text = `c${chat} last`;
      expected.get(chat)!.push(`re: ${text}`);
      inject(chat, text);
    }
    await waitFor(() => chats.every((c) => answersOf(c).includes(`re: c${c} last`)), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: 'the closing message of every chat to be answered',
    }).catch(() => undefined);

    await meta.settled();
    const answers = new Map(chats.map((c) => [c, answersOf(c)]));
    const lost: string[] = [];
    const duplicated: string[] = [];
    const outOfOrder: number[] = [];
    for (const chat of chats) {
      const got = answers.get(chat)!;
      const want = expected.get(chat)!;
      for (const w of want) {
        const n = got.filter((g) => g === w).length;
        if (n === 0) lost.push(w);
        for (let copy = 1; copy < n; copy++) duplicated.push(w);
      }
      const firstSeen = [...new Set(got)];
      if (firstSeen.join('\n') !== want.filter((w) => firstSeen.includes(w)).join('\n')) outOfOrder.push(chat);
    }
    const possibleDuplicatesLogged = everyProcess
      .flatMap((p) => p.logs())
      .filter((l) => typeof l.msg === 'string' && l.msg.includes('may have been sent twice')).length;
    return { answers, expected, lost, duplicated, outOfOrder, kills, readinessDuringOutages, possibleDuplicatesLogged };
  } finally {
    // HERALD_CHAOS_LOGS=<dir> keeps every process's output, for reading a failed run.
    const keep = process.env.HERALD_CHAOS_LOGS;
    if (keep) {
      mkdirSync(keep, { recursive: true });
      for (const [i, p] of everyProcess.entries()) writeFileSync(join(keep, `${i}-${p.proc.pid}.log`), p.output.join('\n'));
    }
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await Promise.all(everyProcess.map((p) => p.stop('SIGKILL').catch(() => undefined)));
    rmSync(dir, { recursive: true, force: true });
  }
}
