/**
 * Secrets never reach the logs: the real gateway process (role all, log level trace) runs with every secret set
 * to a distinctive value — Telegram (webhook mode), Discord, Slack (Socket Mode; the signing secret set too), WhatsApp, the
 * OpenAI and Anthropic keys, the admin token, the API keys — and is made to fail in the ways that tend to print
 * them: refused admin, API, console-login and webhook calls, LLM 401s whose error message quotes the key (as some OpenAI-compatible proxies do),
 * Telegram API calls failing on the network (their URLs carry /bot<token>/), Telegram, Slack and Discord
 * refusing the bot's credentials, a Socket Mode reconnect failing, a photo (Telegram file URLs carry the token
 * too), a second bot account whose Bot API is unreachable. Then every line the process wrote on stdout and stderr, start to exit, is searched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake } from './fakes/discord/index.js';
import { startFakeAnthropic, startFakeOpenAI, type FakeLLM, type RecordedRequest } from './fakes/llm/index.js';
import { startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startTelegramFake, telegramErrors, type TelegramFake } from './fakes/telegram/index.js';
import { signWebhook, startWhatsAppFake, type WhatsAppFake } from './fakes/whatsapp/index.js';
import { waitForWhatsApp, whatsappTexts } from './helpers/whatsapp.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { discordRepliesIn, waitForDiscordReady } from './helpers/discord.js';
import { lastUserText } from './helpers/llm-tags.js';
import { freePort, waitFor } from './helpers/ports.js';
import { slackRepliesIn, waitForSlackIngress } from './helpers/slack.js';
import { postUpdate, privateTextUpdate, repliesIn } from './helpers/telegram.js';

const WEBHOOK_PATH = '/telegram/webhook';
const TIMEOUT_MS = 20_000;

/**
 * Each secret with its core: the part that must not show even in a shortened or re-encoded form (the rest of a
 * token is its public bot id or a fixed prefix). Cores are letters and digits, which no encoding changes.
 */
const SECRETS = [
  { env: 'TELEGRAM_BOT_TOKEN', value: '7263419580:AAFtgCore7Qx9LmZ3vB7kPw', core: 'tgCore7Qx9LmZ3vB7kPw' },
  { env: 'TELEGRAM_WEBHOOK_SECRET', value: 'whCore4pN8sV2xYzR6', core: 'whCore4pN8sV2xYzR6' },
  { env: 'DISCORD_BOT_TOKEN', value: 'MTAxOTg3NjU0MzIxMDk4NzY1NA.GdAbCd.dcCore3Lm4Qx9Zt2VbNk', core: 'dcCore3Lm4Qx9Zt2VbNk' },
  { env: 'SLACK_BOT_TOKEN', value: 'xoxb-5550001-5550002-sbCore0Zr7TqW3', core: 'sbCore0Zr7TqW3' },
  { env: 'SLACK_APP_TOKEN', value: 'xapp-1-A0HERALD1-5550003-saCore0Wq2NdP8', core: 'saCore0Wq2NdP8' },
  { env: 'SLACK_SIGNING_SECRET', value: 'ssCore5Hn5Ue8CjXa', core: 'ssCore5Hn5Ue8CjXa' },
  { env: 'WHATSAPP_ACCESS_TOKEN', value: 'EAAGwaCore3Hy7Lp2Kq9Vd', core: 'waCore3Hy7Lp2Kq9Vd' },
  { env: 'WHATSAPP_APP_SECRET', value: 'asCore8Gm4Tn6Wz1', core: 'asCore8Gm4Tn6Wz1' },
  { env: 'WHATSAPP_VERIFY_TOKEN', value: 'vtCore2Bx5Rk9Pq3', core: 'vtCore2Bx5Rk9Pq3' },
  { env: 'OPENAI_API_KEY', value: 'sk-proj-oaCore6Tb6Ry3LkQ', core: 'oaCore6Tb6Ry3LkQ' },
  { env: 'ANTHROPIC_API_KEY', value: 'sk-ant-api03-anCore1Mv1PsZe', core: 'anCore1Mv1PsZe' },
  // Characters of `openssl rand -base64`, which change when URL-encoded: the admin token travels in ?token=.
  { env: 'HERALD_ADMIN_TOKEN', value: 'adCore8Jc8+Kd2/Qw5=Xe7', core: 'adCore8Jc8' },
  // A list of secrets: each key counts.
  { env: 'HERALD_API_KEYS', value: 'sk-apCore2Rt4Yh8Ln6Wq,sk-bkCore9Pq3Xz5Mv1Bd', core: 'apCore2Rt4Yh8Ln6Wq' },
  // A second Telegram bot whose Bot API cannot be reached: its failing calls carry /bot<token>/ in their URLs.
  {
    env: 'HERALD_BOT_ACCOUNTS',
    value: JSON.stringify([{ platform: 'telegram', name: 'spare', bot_token: '8123456789:AAFspCore5Kd7Xw2Qp9Lm', api_root: 'http://127.0.0.1:9/' }]),
    core: 'spCore5Kd7Xw2Qp9Lm',
  },
] as const;
const secret = (env: (typeof SECRETS)[number]['env']): string => SECRETS.find((s) => s.env === env)!.value;

/** The key the request carried, quoted back in a 401 (LiteLLM and other proxies do this). */
function echoKey(req: RecordedRequest): string {
  return req.headers['x-api-key'] ?? req.headers.authorization ?? '';
}

describe('secrets in the gateway output', () => {
  let tg: TelegramFake;
  let discord: DiscordFake;
  let slack: SlackFake;
  let wa: WhatsAppFake;
  let openai: FakeLLM;
  let anthropic: FakeLLM;
  let cluster: Cluster;
  let hookUrl: string;

  beforeAll(async () => {
    tg = await startTelegramFake({ token: secret('TELEGRAM_BOT_TOKEN') });
    discord = await startDiscordFake({ token: secret('DISCORD_BOT_TOKEN') });
    slack = await startSlackFake({ botToken: secret('SLACK_BOT_TOKEN'), appToken: secret('SLACK_APP_TOKEN'), signingSecret: secret('SLACK_SIGNING_SECRET') });
    wa = await startWhatsAppFake({
      accessToken: secret('WHATSAPP_ACCESS_TOKEN'),
      appSecret: secret('WHATSAPP_APP_SECRET'),
      verifyToken: secret('WHATSAPP_VERIFY_TOKEN'),
    });
    openai = await startFakeOpenAI();
    anthropic = await startFakeAnthropic();
    // Texts starting with "llm-401" are refused by both providers, quoting the key they were sent.
    for (const llm of [openai, anthropic]) {
      llm.respondWith((req) => {
        const text = lastUserText(req);
        return text.startsWith('llm-401') ? { error: { status: 401, message: `Incorrect API key provided: ${echoKey(req)}` } } : { text: `ok: ${text}` };
      });
    }
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}${WEBHOOK_PATH}`;
    cluster = await startCluster({
      workers: 0,
      env: {
        ...Object.fromEntries(SECRETS.map((s) => [s.env, s.value])),
        HERALD_PORT: String(port),
        HERALD_LOG_LEVEL: 'trace',
        TELEGRAM_API_ROOT: tg.url,
        TELEGRAM_WEBHOOK_URL: hookUrl,
        DISCORD_API_URL: discord.apiRoot,
        SLACK_API_URL: slack.apiUrl,
        WHATSAPP_PHONE_NUMBER_ID: wa.phoneNumberId,
        WHATSAPP_API_URL: wa.apiUrl,
        HERALD_MODEL: 'openai:gpt-4.1-mini',
        OPENAI_BASE_URL: openai.url,
        HERALD_FALLBACK_MODELS: 'anthropic:claude-sonnet-4-5',
        ANTHROPIC_BASE_URL: anthropic.url,
        GATEWAY_ALLOW_ALL_USERS: 'true',
      },
    });
    await waitFor(() => tg.webhook, { what: 'setWebhook' });
    await waitForDiscordReady(cluster.ingress);
    await waitForSlackIngress(slack, cluster, 'socket');
    await waitForWhatsApp(wa, cluster);
  });
  afterAll(async () => {
    await cluster?.stop();
    await Promise.all([tg?.close(), discord?.close(), slack?.close(), wa?.close(), openai?.close(), anthropic?.close()]);
  });

  it('provoked failures on every platform and provider leave no secret in anything the process wrote', { timeout: 120_000 }, async () => {
    const gw = cluster.ingress;
    await gw.waitForLog((l) => l.account === 'spare' && String(l.msg).startsWith('telegram start-up call failed'), 'the second bot account failing to connect');
    const admin = secret('HERALD_ADMIN_TOKEN');
    const adminLastCharWrong = `${admin.slice(0, -1)}0`;

    // Refused admin calls, and the dashboard's browser login, whose URL carries the token.
    expect((await fetch(`${gw.url}/admin/sessions`, { headers: { authorization: `Bearer ${adminLastCharWrong}` } })).status).toBe(401);
    expect((await fetch(`${gw.url}/admin/sessions`, { headers: { authorization: `Basic ${Buffer.from(`admin:${admin}`).toString('base64')}` } })).status).toBe(
      401,
    );
    expect((await fetch(`${gw.url}/admin/queues?token=${encodeURIComponent(adminLastCharWrong)}`, { redirect: 'manual' })).status).toBe(401);
    expect((await fetch(`${gw.url}/admin/queues?token=${encodeURIComponent(admin)}`, { redirect: 'manual' })).status).toBe(302);
    expect((await fetch(`${gw.url}/admin/sessions/no-such-id`, { headers: { authorization: `Bearer ${admin}` } })).status).toBe(404);

    // The OpenAI-compatible API with a key wrong in its last character, then the right one; the console's login
    // form with a wrong token, then the right one (the token travels in the form body).
    const apiKey = secret('HERALD_API_KEYS').split(',')[1];
    const completion = (key: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'herald', messages: [{ role: 'user', content: 'api says hi' }] }),
      });
    expect((await completion(`${apiKey.slice(0, -1)}0`)).status).toBe(401);
    expect(((await (await completion(apiKey)).json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content).toBe(
      'ok: api says hi',
    );
    const login = (token: string) =>
      fetch(`${gw.url}/console/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token }).toString(),
      });
    expect((await login(adminLastCharWrong)).status).toBe(401);
    expect((await login(admin)).status).toBe(303);

    // Refused Telegram webhook calls.
    const webhookSecret = secret('TELEGRAM_WEBHOOK_SECRET');
    const update = (updateId: number, chatId: number, text: string): Record<string, unknown> =>
      privateTextUpdate({ updateId, chatId, messageId: updateId, text });
    expect((await postUpdate(hookUrl, update(1, 7001, 'forged'), `${webhookSecret.slice(0, -1)}0`)).status).toBe(401);
    expect((await postUpdate(hookUrl, update(2, 7001, 'forged'))).status).toBe(401);

    // Both providers refuse the key and quote it: the user gets the short notice, never the provider's text.
    tg.world.ensureChat(7002, 'private');
    expect((await postUpdate(hookUrl, update(3, 7002, 'llm-401 on telegram'), webhookSecret)).status).toBe(200);
    await waitFor(() => repliesIn(tg, 7002).some((t) => /refused our credentials/.test(t)), { timeoutMs: TIMEOUT_MS, what: 'the notice after the LLM 401s' });
    expect(openai.requests.some((r) => r.headers.authorization === `Bearer ${secret('OPENAI_API_KEY')}`)).toBe(true);
    expect(anthropic.requests.some((r) => echoKey(r).includes(secret('ANTHROPIC_API_KEY')))).toBe(true);

    // Telegram refuses the token when the bot replies.
    tg.world.ensureChat(7003, 'private');
    tg.failNext('sendMessage', telegramErrors.unauthorized(), 1, (p) => String(p.chat_id) === '7003');
    expect((await postUpdate(hookUrl, update(4, 7003, 'telegram says 401'), webhookSecret)).status).toBe(200);
    await waitFor(() => tg.callsOf('sendMessage').some((c) => c.status === 401), { timeoutMs: TIMEOUT_MS, what: 'the refused sendMessage' });

    // The Telegram API is unreachable while a reply is sent (a plain JSON call: its error names the method, not
    // the URL; node-fetch's errors, as for the second account's start-up below, quote the URL, token included).
    await tg.stop();
    expect((await postUpdate(hookUrl, update(5, 7004, 'telegram is down'), webhookSecret)).status).toBe(200);
    await gw.waitForLog((l) => JSON.stringify(l).includes('sendMessage request failed: connect ECONNREFUSED'), 'a failed sendMessage');
    await tg.restart();

    // A photo: a file the worker could fetch from /file/bot<token>/….
    tg.world.ensureChat(7005, 'private');
    const photo = update(6, 7005, '');
    Object.assign(photo.message as Record<string, unknown>, {
      text: undefined,
      caption: 'what is this?',
      photo: [{ file_id: 'AgADphoto', file_unique_id: 'u1', width: 90, height: 90, file_size: 900 }],
    });
    expect((await postUpdate(hookUrl, photo, webhookSecret)).status).toBe(200);
    await waitFor(() => repliesIn(tg, 7005).length >= 1, { timeoutMs: TIMEOUT_MS, what: 'the answer to the photo' });

    // WhatsApp: a wrong verify token, forged and unsigned webhooks, a photo fetched with the bearer token, and Graph
    // refusing the access token (190) when the bot replies.
    const verifyToken = secret('WHATSAPP_VERIFY_TOKEN');
    const hook = `${gw.url}/whatsapp/webhook`;
    expect((await fetch(`${hook}?hub.mode=subscribe&hub.verify_token=${verifyToken.slice(0, -1)}0&hub.challenge=42`)).status).toBe(403);
    expect((await fetch(`${hook}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=42`)).status).toBe(200);
    const forged = JSON.stringify({ object: 'whatsapp_business_account', entry: [] });
    expect((await wa.postRaw(forged, signWebhook(`${secret('WHATSAPP_APP_SECRET').slice(0, -1)}0`, forged))).status).toBe(401);
    const photoId = wa.hostMedia(Buffer.from('89504e470d0a1a0a', 'hex'), 'image/png');
    await wa.message({ type: 'image', image: { id: photoId, mime_type: 'image/png', caption: 'whatsapp photo' } }, { from: '15550007001' });
    await waitFor(() => whatsappTexts(wa, '15550007001').length >= 1, { timeoutMs: TIMEOUT_MS, what: 'the answer to the WhatsApp photo' });
    wa.failNext({ status: 401, code: 190, message: `Error validating access token for ${secret('WHATSAPP_ACCESS_TOKEN')}` });
    await wa.text('whatsapp says 190', { from: '15550007002' });
    await gw.waitForLog((l) => JSON.stringify(l).includes('code 190'), 'the refused WhatsApp reply');

    // Slack refuses the bot token when it replies; then the Socket Mode connection drops and reconnecting fails
    // for a while (apps.connections.open carries the app token).
    slack.failNext('chat.postMessage', 'invalid_auth');
    const d = await slack.dm({ user: 'U0LEAK', text: 'slack says invalid_auth' });
    await waitFor(() => slack.calls.some((c) => c.method === 'chat.postMessage' && c.args.channel === d.channel), {
      timeoutMs: TIMEOUT_MS,
      what: 'the refused postMessage',
    });
    await slack.stop();
    await gw.waitForLog((l) => l.platform === 'slack' && String(l.msg).startsWith('http request failed'), 'a failed Slack reconnect');
    await slack.restart();
    await slack.socket.waitFor(() => slack.socket.openConnections === 1, TIMEOUT_MS, 'the Socket Mode reconnect');
    const after = await slack.dm({ user: 'U0LEAK', text: 'back again' });
    await waitFor(() => slackRepliesIn(slack, after.channel).includes('ok: back again'), {
      timeoutMs: TIMEOUT_MS,
      what: 'the Slack reply after the reconnect',
    });

    // The providers refuse their keys for a Discord user too; then Discord refuses the bot token (last: after a
    // 401, discord.js drops the token and sends nothing more).
    const { alice } = discord.fixtures;
    const dm = discord.openDm(alice);
    discord.postUserMessage({ channelId: dm, author: alice, content: 'llm-401 on discord' });
    await waitFor(() => discordRepliesIn(discord, dm).some((t) => /refused our credentials/.test(t)), { timeoutMs: TIMEOUT_MS, what: 'the Discord notice' });
    discord.failNext('createMessage', { status: 401, code: 0, message: '401: Unauthorized' });
    discord.postUserMessage({ channelId: dm, author: alice, content: 'discord says 401' });
    await waitFor(() => discord.requests.some((r) => r.route === 'createMessage' && r.status === 401), {
      timeoutMs: TIMEOUT_MS,
      what: 'the refused createMessage',
    });

    // Everything the process wrote, up to and including its shutdown.
    await cluster.stop();
    const output = gw.output.join('\n');
    // The failures did print what carries a secret — the providers' refusals quoting the key, the Bot API URL —
    // with the secret taken out.
    const llmFailures = gw.logs().filter((l) => l.msg === 'LLM request failed' && l.kind === 'auth');
    expect(new Set(llmFailures.map((l) => l.provider))).toEqual(new Set(['openai', 'anthropic']));
    for (const l of llmFailures) expect(l.error).toMatch(/^(401 )?Incorrect API key provided: (Bearer )?\[redacted\]/);
    expect(output).toMatch(/\/bot8123456789:\[redacted\]\/\w+/i);
    for (const s of SECRETS) {
      for (const form of new Set([s.value, encodeURIComponent(s.value), JSON.stringify(s.value).slice(1, -1), s.core])) {
        expect(output.includes(form), `${s.env} (as "${form}") in the gateway output`).toBe(false);
      }
    }
    expect(output).not.toMatch(/\/file\/bot\d+:(?!\[redacted\])/i);

    // Nor in what the bot said to anyone.
    const said = [...tg.sent.map((m) => m.text ?? ''), ...slack.sent.map((m) => m.text), ...discord.sent.map((m) => m.content)].join('\n');
    for (const s of SECRETS) expect(said, s.env).not.toContain(s.core);
    expect(output, 'the second API key').not.toContain('bkCore9Pq3Xz5Mv1Bd');
  });
});
