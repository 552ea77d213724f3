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

  it('keeps message metadata and shows it in history and threads only with include_all_metadata', async () => {
    const client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const metadata = { event_type: 'herald_reply', event_payload: { key: 'k', chunk: 0 } };
    const top = await client.chat.postMessage({ channel: 'D0ALICE', text: 'top', metadata });
    expect(fake.sent[0].metadata).toEqual(metadata);

    const plain = await client.conversations.history({ channel: 'D0ALICE' });
    expect(plain.messages?.[0]).not.toHaveProperty('metadata');
    const full = await client.conversations.history({ channel: 'D0ALICE', include_all_metadata: true });
    expect(full.messages?.[0]).toMatchObject({ ts: top.ts, metadata });

    await client.chat.postMessage({ channel: 'D0ALICE', thread_ts: top.ts, text: 'in thread', metadata });
    const thread = await client.conversations.replies({ channel: 'D0ALICE', ts: String(top.ts), include_all_metadata: true });
    expect(thread.messages?.map((m) => [m.text, m.metadata?.event_type])).toEqual([
      ['top', 'herald_reply'],
      ['in thread', 'herald_reply'],
    ]);

    await expect(client.chat.postMessage({ channel: 'D0ALICE', text: 'x', metadata: '{' as never })).rejects.toMatchObject({
      data: { ok: false, error: 'invalid_metadata_format' },
    });
    await expect(client.chat.postMessage({ channel: 'D0ALICE', text: 'x', metadata: { event_type: 'e' } as never })).rejects.toMatchObject({
      data: { ok: false, error: 'invalid_metadata_schema' },
    });
  });

  it('pages conversations.history newest first, top level only, within oldest, with has_more and a cursor', async () => {
    const client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const ts: string[] = [];
    for (let i = 0; i < 5; i++) ts.push(String((await client.chat.postMessage({ channel: 'C0GENERAL', text: `m${i}` })).ts));
    await client.chat.postMessage({ channel: 'C0GENERAL', thread_ts: ts[0], text: 'a reply' });

    const first = await client.conversations.history({ channel: 'C0GENERAL', limit: 2, oldest: ts[0] });
    expect(first.messages?.map((m) => m.text)).toEqual(['m4', 'm3']);
    expect(first).toMatchObject({ ok: true, has_more: true, pin_count: 0 });
    const cursor = first.response_metadata?.next_cursor;
    expect(cursor).toMatch(/.+/);
    const second = await client.conversations.history({ channel: 'C0GENERAL', limit: 2, oldest: ts[0], cursor });
    expect(second.messages?.map((m) => m.text)).toEqual(['m2', 'm1']);
    expect(second.has_more).toBe(false);
    expect(second.response_metadata?.next_cursor).toBeUndefined();
    const inclusive = await client.conversations.history({ channel: 'C0GENERAL', oldest: ts[3], inclusive: true });
    expect(inclusive.messages?.map((m) => m.text)).toEqual(['m4', 'm3']);
  });

  it('answers history without the scope for the conversation type with missing_scope, needed and provided', async () => {
    fake.setScopes(['chat:write', 'channels:history']);
    const client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    await expect(client.conversations.history({ channel: 'C0GENERAL' })).resolves.toMatchObject({ ok: true });
    await expect(client.conversations.history({ channel: 'D0ALICE' })).rejects.toMatchObject({
      data: { ok: false, error: 'missing_scope', needed: 'im:history', provided: 'chat:write,channels:history' },
    });
    await expect(client.reactions.add({ channel: 'C0GENERAL', timestamp: '1.000001', name: 'eyes' })).rejects.toMatchObject({
      data: { error: 'missing_scope', needed: 'reactions:write' },
    });
  });

  it('answers a wrong token with invalid_auth and the app token on a bot method with not_allowed_token_type', async () => {
    const wrong = new WebClient('xoxb-nope', { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    await expect(wrong.auth.test()).rejects.toMatchObject({ data: { ok: false, error: 'invalid_auth' } });
    const app = new WebClient(fake.appToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    await expect(app.chat.postMessage({ channel: 'C1', text: 'x' })).rejects.toMatchObject({ data: { error: 'not_allowed_token_type' } });
  });

  it('Block Kit: buttons are checked (unique action_id, 75-character text), ephemerals and home views are recorded', async () => {
    const client = new WebClient(fake.botToken, { slackApiUrl: fake.apiUrl, retryConfig: { retries: 0 } });
    const button = (id: string, text: string) => ({ type: 'button' as const, action_id: id, text: { type: 'plain_text' as const, text }, value: id });
    const section = { type: 'section' as const, text: { type: 'mrkdwn' as const, text: 'pick' } };
    await expect(
      client.chat.postMessage({ channel: 'D0ALICE', text: 'pick', blocks: [section, { type: 'actions', elements: [button('a', 'A'), button('a', 'B')] }] }),
    ).rejects.toThrow(/invalid_blocks/);
    await expect(
      client.chat.postMessage({ channel: 'D0ALICE', text: 'pick', blocks: [section, { type: 'actions', elements: [button('a', 'x'.repeat(76))] }] }),
    ).rejects.toThrow(/invalid_blocks/);
    const posted = await client.chat.postMessage({ channel: 'D0ALICE', text: 'pick', blocks: [section, { type: 'actions', elements: [button('a', 'A')] }] });
    await expect(fake.pressButton({ user: 'U0ALICE', channel: 'D0ALICE', ts: String(posted.ts), actionId: 'nope' })).rejects.toThrow(/no button/);

    await client.chat.postEphemeral({ channel: 'C0GENERAL', user: 'U0BOB', text: 'only for Bob' });
    expect(fake.ephemerals).toEqual([{ channel: 'C0GENERAL', user: 'U0BOB', text: 'only for Bob' }]);
    expect(fake.sent.map((m) => m.text)).toEqual(['pick']);
    await expect(client.views.publish({ user_id: 'U0BOB', view: { type: 'modal', blocks: [section] } as never })).rejects.toThrow(/invalid_arguments/);
    await client.views.publish({ user_id: 'U0BOB', view: { type: 'home', blocks: [section] } });
    expect(fake.homeViews).toEqual([{ userId: 'U0BOB', view: { type: 'home', blocks: [section] } }]);
  });
});
