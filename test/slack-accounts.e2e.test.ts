/**
 * Two Slack apps on Events over HTTP through the real gateway: the default app (SLACK_SIGNING_SECRET) at
 * `POST /slack/events`, an extra app (`bot_accounts`, its own `signing_secret`) at `POST /slack/events/sales`, each
 * with its own Slack stand-in. Each request is checked against the secret of the app whose URL it came to, the
 * event is handled as that app's (routed by `account`), and the reply goes out through that app's bot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { eventCallback, postSignedEvent, startSlackFake, type SlackFake } from './fakes/slack/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { slackEnv, slackRepliesIn } from './helpers/slack.js';

const REPLY_TIMEOUT_MS = 15_000;
const INGRESS_STARTED_MSG = 'slack: ingress started';

let main: SlackFake;
let sales: SlackFake;
let llm: FakeLLM;
let cluster: Cluster;

beforeAll(async () => {
  main = await startSlackFake({ signingSecret: 'main-app-signing-secret' });
  sales = await startSlackFake({
    signingSecret: 'sales-app-signing-secret',
    botToken: 'xoxb-sales-bot-token',
    teamId: 'T0SALES01',
    appId: 'A0SALES01',
    botUserId: 'U0SALESBOT',
    botId: 'B0SALES01',
  });
  llm = await startFakeOpenAI();
  llm.respondWith(async (req) => ({ text: `ok: ${lastUserText(req)}` }));
  cluster = await startCluster({
    workers: 0,
    env: slackEnv(main, llm, 'http', {
      HERALD_BOT_ACCOUNTS: JSON.stringify([
        { platform: 'slack', name: 'sales', bot_token: sales.botToken, signing_secret: sales.signingSecret, api_url: sales.apiUrl },
      ]),
      HERALD_PROFILES: JSON.stringify({ desk: { system_prompt: 'You are the sales desk.' } }),
      HERALD_ROUTES: JSON.stringify([{ platform: 'slack', account: 'sales', profile: 'desk' }]),
    }),
  });
  await waitFor(() => cluster.ingress.logs().filter((l) => l.msg === INGRESS_STARTED_MSG).length === 2, {
    timeoutMs: 20_000,
    what: `both Slack ingresses to start:\n${cluster.ingress.output.join('\n')}`,
  });
  main.setEventsUrl(`${cluster.ingress.url}/slack/events`);
  sales.setEventsUrl(`${cluster.ingress.url}/slack/events/sales`);
});

afterAll(async () => {
  await cluster?.stop();
  await Promise.all([main?.close(), sales?.close(), llm?.close()]);
});

describe('several Slack apps over Events HTTP', () => {
  it("each app's signed events arrive at its own URL, run under its route and are answered through its own bot", async () => {
    const toMain = await main.dm({ user: 'U0ANA', text: 'hello main app' });
    const toSales = await sales.dm({ user: 'U0BEN', text: 'hello sales app' });
    expect(toMain.responses.map((r) => r.status)).toEqual([200]);
    expect(toSales.responses.map((r) => r.status)).toEqual([200]);

    await waitFor(() => slackRepliesIn(main, toMain.channel).length > 0 && slackRepliesIn(sales, toSales.channel).length > 0, {
      timeoutMs: REPLY_TIMEOUT_MS,
      what: 'both apps to answer',
    });
    expect(slackRepliesIn(main, toMain.channel)).toEqual(['ok: hello main app']);
    expect(slackRepliesIn(sales, toSales.channel)).toEqual(['ok: hello sales app']);
    // Neither bot posted the other's reply.
    expect(main.sent.some((s) => s.text.includes('sales app'))).toBe(false);
    expect(sales.sent.some((s) => s.text.includes('main app'))).toBe(false);
    // The extra app's message ran under the profile its route names.
    const salesCall = llm.requests.find((r) => lastUserText(r) === 'hello sales app');
    expect(JSON.stringify(salesCall?.body.messages)).toContain('You are the sales desk.');
  });

  it("an event signed with one app's secret is refused at the other app's URL (401), and a forged one at its own", async () => {
    const before = llm.requests.length;
    const event = { type: 'message', channel: 'D0CROSS', user: 'U0EVE', text: 'cross-app forgery', ts: '1700000000.000100', channel_type: 'im' };
    const ws = (f: SlackFake) => ({ teamId: f.teamId, appId: f.appId, botUserId: f.botUserId, verificationToken: 'fake-verification-token' });
    const mainSigned = eventCallback(ws(main), event);
    const salesSigned = eventCallback(ws(sales), event);

    expect((await postSignedEvent(`${cluster.ingress.url}/slack/events/sales`, mainSigned, { signingSecret: main.signingSecret })).status).toBe(401);
    expect((await postSignedEvent(`${cluster.ingress.url}/slack/events`, salesSigned, { signingSecret: sales.signingSecret })).status).toBe(401);
    expect(
      (await postSignedEvent(`${cluster.ingress.url}/slack/events/sales`, salesSigned, { signingSecret: sales.signingSecret, forgeSignature: true })).status,
    ).toBe(401);
    const unsigned = await fetch(`${cluster.ingress.url}/slack/events/sales`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(salesSigned),
    });
    expect(unsigned.status).toBe(401);
    // An account that does not exist has no URL.
    expect((await postSignedEvent(`${cluster.ingress.url}/slack/events/nobody`, salesSigned, { signingSecret: sales.signingSecret })).status).toBe(404);

    // Each app still answers Slack's URL verification at its own URL, with its own secret.
    const challenge = await postSignedEvent(
      `${cluster.ingress.url}/slack/events/sales`,
      { type: 'url_verification', challenge: 'sales-challenge', token: 'x' },
      { signingSecret: sales.signingSecret },
    );
    expect(challenge.status).toBe(200);
    expect(JSON.parse(challenge.body)).toEqual({ challenge: 'sales-challenge' });

    expect(llm.requests.length).toBe(before);
    expect(main.sent.concat(sales.sent).some((s) => s.text.includes('cross-app forgery'))).toBe(false);
  });
});
