import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startSlackFake, waitFor, type SlackFake } from './index.js';

let fake: SlackFake;
beforeEach(async () => {
  fake = await startSlackFake({ ackTimeoutMs: 100 });
});
afterEach(async () => {
  await fake.close();
});

describe('Slack stand-in', () => {
  it('redelivers an unacked Socket Mode envelope with retry_attempt, and stops once acked', async () => {
    const open = await new WebClient(fake.appToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } }).apps.connections.open({});
    expect(open.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/link\/\?ticket=/);
    const ws = new WebSocket(String(open.url));
    const frames: Record<string, unknown>[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as Record<string, unknown>));
    await waitFor(() => frames.length === 1, 5_000, 'hello');
    expect(frames[0]).toMatchObject({ type: 'hello', connection_info: { app_id: fake.appId } });

    const d = await fake.dm({ user: 'U0ALICE', text: 'hi' });
    await waitFor(() => frames.length === 3, 5_000, 'a redelivery');
    expect(frames.slice(1).map((f) => f.retry_attempt)).toEqual([0, 1]);
    expect(frames[2]).toMatchObject({ type: 'events_api', envelope_id: d.envelopeIds[0], retry_reason: 'timeout' });

    ws.send(JSON.stringify({ envelope_id: d.envelopeIds[0], payload: {} }));
    await fake.socket.waitFor(() => fake.socket.isAcked(d.envelopeIds[0]), 5_000, 'the ack');
    await new Promise((r) => setTimeout(r, 250));
    expect(frames).toHaveLength(3);
    ws.terminate();
  });

  it('refuses a reused or unknown ticket', async () => {
    const ws = new WebSocket(`${fake.url.replace('http', 'ws')}/link/?ticket=nope`);
    const status = await new Promise<number | undefined>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode));
      ws.on('error', () => resolve(undefined));
    });
    expect(status).toBe(401);
  });

  it('serves a thread through conversations.replies, bot replies included', async () => {
    const client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const root = await fake.channelMessage({ channel: 'C0GENERAL', user: 'U0BOB', text: `<@${fake.botUserId}> hi` });
    await client.chat.postMessage({ channel: 'C0GENERAL', thread_ts: root.ts, text: 'hello Bob' });
    const res = await client.conversations.replies({ channel: 'C0GENERAL', ts: root.ts });
    expect(res.messages?.map((m) => [m.user, m.text, m.bot_id])).toEqual([
      ['U0BOB', `<@${fake.botUserId}> hi`, undefined],
      [fake.botUserId, 'hello Bob', fake.botId],
    ]);
  });

  it('answers a wrong token with invalid_auth and the app token on a bot method with not_allowed_token_type', async () => {
    const wrong = new WebClient('xoxb-nope', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    await expect(wrong.auth.test()).rejects.toMatchObject({ data: { ok: false, error: 'invalid_auth' } });
    const app = new WebClient(fake.appToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    await expect(app.chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({ data: { error: 'not_allowed_token_type' } });
  });
});
