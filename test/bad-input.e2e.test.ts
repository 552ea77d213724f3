/**
 * Bad input gets a clear answer and loses nothing (DESIGN.md): malformed webhook bodies, invalid UTF-16,
 * oversize messages — through the real gateway with Telegram (webhook) and Slack (Events over HTTP) at once.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { signSlackRequest } from './fakes/slack/events.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { lastUserText } from './helpers/llm-tags.js';
import { freePort, waitFor } from './helpers/ports.js';
import { slackRepliesIn, waitForSlackIngress } from './helpers/slack.js';
import { TELEGRAM_SECRET_HEADER, privateTextUpdate } from './helpers/telegram.js';
import { readStoreFile } from './helpers/store-rows.js';

const WEBHOOK_PATH = '/telegram/webhook';
const SECRET = 'bad-input_secret-7';

describe('bad input through the gateway', () => {
  let tg: TelegramFake;
  let slack: SlackFake;
  let llm: FakeLLM;
  let cluster: Cluster;
  let hookUrl: string;

  beforeAll(async () => {
    tg = await startTelegramFake();
    slack = await startSlackFake();
    llm = await startFakeOpenAI();
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}${WEBHOOK_PATH}`;
    cluster = await startCluster({
      workers: 0,
      env: {
        ...telegramEnv(tg, llm, { HERALD_PORT: String(port), TELEGRAM_WEBHOOK_URL: hookUrl, TELEGRAM_WEBHOOK_SECRET: SECRET }),
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_API_URL: slack.apiUrl,
        SLACK_SIGNING_SECRET: slack.signingSecret,
      },
    });
    await waitFor(() => tg.webhook, { what: 'setWebhook' });
    await waitForSlackIngress(slack, cluster, 'http');
  });
  afterAll(async () => {
    await cluster?.stop();
    await llm?.close();
    await slack?.close();
    await tg?.close();
  });

  /** Mailbox and redelivery keys; a previous test's mailbox may still go away meanwhile, so compare what is new. */
  async function queueKeys(): Promise<Set<string>> {
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      return new Set([...(await redis.keys(`${cluster.prefix}:mbox:*`)), ...(await redis.keys(`${cluster.prefix}:seen:*`))]);
    } finally {
      redis.disconnect();
    }
  }
  async function newQueueKeys(before: Set<string>): Promise<string[]> {
    return [...(await queueKeys())].filter((k) => !before.has(k));
  }

  it('a malformed Telegram webhook body with the right secret gets 400, enqueues nothing, and the next update works', async () => {
    const before = await queueKeys();
    const res = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TELEGRAM_SECRET_HEADER]: SECRET },
      body: '{"update_id": 12, "message": {',
    });
    expect(res.status).toBe(400);
    expect(await newQueueKeys(before)).toEqual([]);

    tg.injectMessage({ chatId: 901, userId: 901, text: 'still here?' });
    await waitFor(() => repliesIn(tg, 901).length >= 1, { what: 'the reply after the bad body' });
    expect(repliesIn(tg, 901)).toEqual(['ok: still here?']);
  });

  it('a Telegram message whose message_id is 0 (Telegram numbers from 1) gets 400 and enqueues nothing, instead of a 500 from aiming a reply at it', async () => {
    const before = await queueKeys();
    const message = {
      message_id: 0,
      date: 1_700_000_000,
      chat: { id: 902, type: 'private' },
      from: { id: 902, is_bot: false, first_name: 'Zero' },
      text: 'hi',
    };
    const res = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TELEGRAM_SECRET_HEADER]: SECRET },
      body: JSON.stringify({ update_id: 13, message }),
    });
    expect(res.status).toBe(400);
    expect(await newQueueKeys(before)).toEqual([]);
  });

  it('a correctly signed Slack event whose body is not JSON gets 400 and enqueues nothing', async () => {
    const before = await queueKeys();
    const body = '{"type":"event_callback","event":';
    const ts = Math.floor(Date.now() / 1000);
    const res = await fetch(`${cluster.ingress.url}/slack/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-slack-request-timestamp': String(ts),
        'x-slack-signature': signSlackRequest(slack.signingSecret, ts, body),
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(await newQueueKeys(before)).toEqual([]);
  });

  it('text with lone UTF-16 surrogates is answered; the model and the transcript get U+FFFD in their place', async () => {
    // JSON can carry a lone surrogate as an escape; Telegram's own clients never send one, a broken bot API proxy might.
    const update = privateTextUpdate({ updateId: 777_001, chatId: 902, messageId: 5, text: 'broken \ud800 text \udfff end' });
    tg.world.ensureChat(902, 'private');
    const res = await fetch(hookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TELEGRAM_SECRET_HEADER]: SECRET },
      body: JSON.stringify(update),
    });
    expect(res.status).toBe(200);
    await waitFor(() => repliesIn(tg, 902).length >= 1, { what: 'the reply' });
    const sent = llm.requests.map(lastUserText).find((t) => t.startsWith('broken'));
    expect(sent).toBe('broken \ufffd text \ufffd end');
    const row = readStoreFile(
      cluster.dbPath,
      (db) => db.prepare("SELECT content FROM messages WHERE role = 'user' AND content LIKE 'broken%'").get() as { content: string },
    );
    expect(row.content).toBe('broken \ufffd text \ufffd end');
  });

  it('an oversize message gets a clear answer instead of a turn', async () => {
    const huge = `please read this: ${'x'.repeat(65_000)}`;
    const { channel } = await slack.dm({ user: 'U0BIG', text: huge });
    await waitFor(() => slackRepliesIn(slack, channel).length >= 1, { what: 'the answer to the oversize message' });
    expect(slackRepliesIn(slack, channel)[0]).toMatch(/too long \(65018 characters; the limit is 64000\)/);
    expect(llm.requests.some((r) => lastUserText(r).startsWith('please read this'))).toBe(false);
  });
});
