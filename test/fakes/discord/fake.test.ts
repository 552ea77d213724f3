/**
 * The stand-in speaks Discord's wire protocol: checked here with plain fetch and ws, independent of discord.js, so
 * adapter and end-to-end tests can trust it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { discordFailures, startDiscordFake, type DiscordFake } from './index.js';

let fake: DiscordFake;
const sockets: WebSocket[] = [];

beforeEach(async () => {
  fake = await startDiscordFake();
});

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await fake.close();
});

function api(path: string, init: RequestInit = {}, token = fake.token): Promise<Response> {
  return fetch(`${fake.apiRoot}/v10${path}`, {
    ...init,
    headers: { Authorization: `Bot ${token}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });
}

interface Frame {
  op: number;
  s?: number | null;
  t?: string | null;
  d?: unknown;
}

/** A raw gateway client that collects frames and the close code. */
function connect(query = '?v=10&encoding=json'): {
  ws: WebSocket;
  frames: Frame[];
  closed: Promise<number>;
  next(pred: (f: Frame) => boolean): Promise<Frame>;
} {
  const ws = new WebSocket(`${fake.gatewayUrl}/${query}`);
  sockets.push(ws);
  const frames: Frame[] = [];
  const waiters: { pred: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = [];
  ws.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Frame;
    frames.push(frame);
    for (const w of waiters.splice(0)) {
      if (w.pred(frame)) w.resolve(frame);
      else waiters.push(w);
    }
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  return {
    ws,
    frames,
    closed,
    next: (pred) => {
      const seen = frames.find(pred);
      return seen ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ pred, resolve }));
    },
  };
}

const identify = (token: string, intents: number): string =>
  JSON.stringify({ op: 2, d: { token, intents, properties: { os: 'linux', browser: 'test', device: 'test' }, shard: [0, 1] } });
const INTENTS = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

describe('discord stand-in REST', () => {
  it('GET /gateway/bot returns the stand-in gateway with one shard and a session start limit', async () => {
    const res = await api('/gateway/bot');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      url: fake.gatewayUrl,
      shards: 1,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
    });
  });

  it("refuses a wrong token with 401 and Discord's body", async () => {
    const res = await api('/users/@me', {}, 'nope');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ message: '401: Unauthorized', code: 0 });
  });

  it('answers typing with 204 and no content type', async () => {
    const res = await api(`/channels/${fake.fixtures.generalChannelId}/typing`, { method: 'POST' });
    expect(res.status).toBe(204);
    expect(res.headers.get('content-type')).toBeNull();
    expect(await res.text()).toBe('');
  });

  it('refuses content over 2,000 characters with 50035 and the field error', async () => {
    const res = await api(`/channels/${fake.fixtures.generalChannelId}/messages`, { method: 'POST', body: JSON.stringify({ content: 'x'.repeat(2001) }) });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: { content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] } },
    });
    expect(fake.sent).toHaveLength(0);
  });

  it('answers an unknown channel with 404 / 10003', async () => {
    const res = await api('/channels/1/messages', { method: 'POST', body: JSON.stringify({ content: 'hi' }) });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ message: 'Unknown Channel', code: 10003 });
  });

  it('refuses a reply to an unknown message unless fail_if_not_exists is false', async () => {
    const path = `/channels/${fake.fixtures.generalChannelId}/messages`;
    const refused = await api(path, { method: 'POST', body: JSON.stringify({ content: 'a', message_reference: { message_id: '12345' } }) });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 50035, errors: { message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE' }] } } });
    const lenient = await api(path, {
      method: 'POST',
      body: JSON.stringify({ content: 'b', message_reference: { message_id: '12345', fail_if_not_exists: false } }),
    });
    expect(lenient.status).toBe(200);
    expect(await lenient.json()).toMatchObject({ content: 'b', type: 0 });
  });

  it('with enforce_nonce returns the earlier message for a repeated nonce, 200 and nothing new, within the window only', async () => {
    const path = `/channels/${fake.fixtures.generalChannelId}/messages`;
    const post = (body: object): Promise<Response> => api(path, { method: 'POST', body: JSON.stringify(body) });

    const first = await post({ content: 'once', nonce: 'n-1', enforce_nonce: true });
    expect(first.status).toBe(200);
    const created = (await first.json()) as { id: string; nonce: string };
    expect(created.nonce).toBe('n-1');

    const repeat = await post({ content: 'once, again', nonce: 'n-1', enforce_nonce: true });
    expect(repeat.status).toBe(200);
    expect(await repeat.json()).toMatchObject({ id: created.id, content: 'once', nonce: 'n-1' });
    // Without enforce_nonce the nonce is only echoed: a second message.
    const unenforced = await post({ content: 'twice', nonce: 'n-1' });
    expect(((await unenforced.json()) as { id: string }).id).not.toBe(created.id);
    expect(fake.sent.map((m) => m.content)).toEqual(['once', 'twice']);

    // The window (3 minutes by default) counts from the first message.
    const idOf = async (res: Promise<Response>): Promise<string> => ((await (await res).json()) as { id: string }).id;
    const firstOfTwo = await idOf(post({ content: 'two', nonce: 'n-2', enforce_nonce: true }));
    fake.advanceClock(2 * 60_000);
    expect(await idOf(post({ content: 'two', nonce: 'n-2', enforce_nonce: true }))).toBe(firstOfTwo);
    fake.advanceClock(60_000);
    expect(await idOf(post({ content: 'two', nonce: 'n-2', enforce_nonce: true }))).not.toBe(firstOfTwo);
    expect(fake.sent.map((m) => m.content)).toEqual(['once', 'twice', 'two', 'two']);
  });

  it('refuses a nonce over 25 characters with 50035 and the field error', async () => {
    const res = await api(`/channels/${fake.fixtures.generalChannelId}/messages`, {
      method: 'POST',
      body: JSON.stringify({ content: 'x', nonce: 'n'.repeat(26), enforce_nonce: true }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: { nonce: { _errors: [{ code: 'NONCE_TYPE_TOO_LONG', message: 'Must be 25 or fewer characters long.' }] } },
    });
    expect(fake.sent).toHaveLength(0);
  });

  it('sends a 429 with retry_after, Retry-After and X-RateLimit headers when told to', async () => {
    fake.failNext('typing', discordFailures.rateLimited(2.5));
    const res = await api(`/channels/${fake.fixtures.generalChannelId}/typing`, { method: 'POST' });
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ message: 'You are being rate limited.', retry_after: 2.5, global: false });
    expect(res.headers.get('retry-after')).toBe('3');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset-after')).toBe('2.500');
    expect(res.headers.get('x-ratelimit-scope')).toBe('user');
    expect((await api(`/channels/${fake.fixtures.generalChannelId}/typing`, { method: 'POST' })).status).toBe(204);
  });

  it('starts a thread from a message with the message id, once', async () => {
    const msg = fake.postUserMessage({ channelId: fake.fixtures.generalChannelId, author: fake.fixtures.alice, content: 'topic' });
    const path = `/channels/${fake.fixtures.generalChannelId}/messages/${String(msg.id)}/threads`;
    const res = await api(path, { method: 'POST', body: JSON.stringify({ name: 'Topic' }) });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ id: msg.id, type: 11, parent_id: fake.fixtures.generalChannelId, name: 'Topic' });
    const again = await api(path, { method: 'POST', body: JSON.stringify({ name: 'Topic' }) });
    expect(await again.json()).toEqual({ message: 'A thread has already been created for this message', code: 160004 });
  });
});

describe('discord stand-in gateway', () => {
  it('HELLO, heartbeat ACK, IDENTIFY → READY then a GUILD_CREATE for every guild, then dispatches with increasing s', async () => {
    const c = connect();
    const hello = await c.next((f) => f.op === 10);
    expect(hello.d).toEqual({ heartbeat_interval: 41_250 });
    c.ws.send(JSON.stringify({ op: 1, d: null }));
    await c.next((f) => f.op === 11);

    c.ws.send(identify(fake.token, INTENTS));
    const ready = await c.next((f) => f.t === 'READY');
    expect(ready).toMatchObject({ op: 0, s: 1, d: { user: { id: fake.bot.id, bot: true }, guilds: [{ id: fake.fixtures.guildId, unavailable: true }] } });
    expect(ready.d).toHaveProperty('session_id');
    expect(ready.d).toHaveProperty('resume_gateway_url', fake.gatewayUrl);
    const guild = await c.next((f) => f.t === 'GUILD_CREATE');
    expect(guild).toMatchObject({ s: 2, d: { id: fake.fixtures.guildId, unavailable: false } });

    const dmId = fake.openDm(fake.fixtures.alice);
    fake.postUserMessage({ channelId: dmId, author: fake.fixtures.alice, content: 'hi' });
    const dm = await c.next((f) => f.t === 'MESSAGE_CREATE');
    expect(dm.s).toBe(3);
    expect(dm.d).toMatchObject({ channel_id: dmId, channel_type: 1, content: 'hi' });
    expect(dm.d).not.toHaveProperty('guild_id');
  });

  it('for fuzzing: any event in sequence, raw frames outside it, and a heartbeat request answered by the client', async () => {
    const c = connect();
    await c.next((f) => f.op === 10);
    c.ws.send(identify(fake.token, INTENTS));
    const guild = await c.next((f) => f.t === 'GUILD_CREATE');

    fake.dispatchRaw('MESSAGE_CREATE', null);
    fake.sendRaw(JSON.stringify({ op: 42, d: 'anything' }));
    expect(await c.next((f) => f.t === 'MESSAGE_CREATE')).toEqual({ op: 0, s: (guild.s ?? 0) + 1, t: 'MESSAGE_CREATE', d: null });
    expect(await c.next((f) => f.op === 42)).toEqual({ op: 42, d: 'anything' });

    let answered = false;
    const heartbeat = fake.requestHeartbeat().then(() => (answered = true));
    await c.next((f) => f.op === 1);
    expect(answered).toBe(false);
    c.ws.send(JSON.stringify({ op: 1, d: guild.s }));
    await heartbeat;
    await c.next((f) => f.op === 11); // and the heartbeat is ACKed, as any other
  });

  it('closes with 4014 when the Message Content intent is not enabled, and 4004 for a bad token', async () => {
    fake.setMessageContentIntent(false);
    const a = connect();
    await a.next((f) => f.op === 10);
    a.ws.send(identify(fake.token, INTENTS));
    expect(await a.closed).toBe(4014);

    const b = connect();
    await b.next((f) => f.op === 10);
    b.ws.send(identify('wrong', INTENTS & ~(1 << 15)));
    expect(await b.closed).toBe(4004);
  });

  it('hides message content from a session without the Message Content intent unless the bot is mentioned', async () => {
    const c = connect();
    await c.next((f) => f.op === 10);
    c.ws.send(identify(fake.token, INTENTS & ~(1 << 15)));
    await c.next((f) => f.t === 'GUILD_CREATE');
    const { generalChannelId, alice } = fake.fixtures;
    fake.postUserMessage({ channelId: generalChannelId, author: alice, content: 'secret' });
    fake.postUserMessage({ channelId: generalChannelId, author: alice, content: `<@${fake.bot.id}> visible` });
    await c.next((f) => f.t === 'MESSAGE_CREATE' && (f.d as { content: string }).content.includes('visible'));
    const contents = c.frames.filter((f) => f.t === 'MESSAGE_CREATE').map((f) => (f.d as { content: string }).content);
    expect(contents).toEqual(['', `<@${fake.bot.id}> visible`]);
  });

  it('RESUME replays what was missed then RESUMED; an unknown session gets INVALID_SESSION', async () => {
    const first = connect();
    await first.next((f) => f.op === 10);
    first.ws.send(identify(fake.token, INTENTS));
    const ready = await first.next((f) => f.t === 'READY');
    const sessionId = (ready.d as { session_id: string }).session_id;
    await first.next((f) => f.t === 'GUILD_CREATE');
    fake.dropConnections({ code: 4000 });
    expect(await first.closed).toBe(4000);

    const dmId = fake.openDm(fake.fixtures.alice);
    fake.postUserMessage({ channelId: dmId, author: fake.fixtures.alice, content: 'missed' });

    const second = connect();
    await second.next((f) => f.op === 10);
    second.ws.send(JSON.stringify({ op: 6, d: { token: fake.token, session_id: sessionId, seq: 2 } }));
    await second.next((f) => f.t === 'RESUMED');
    expect(second.frames.filter((f) => f.op === 0).map((f) => [f.t, f.s])).toEqual([
      ['MESSAGE_CREATE', 3],
      ['RESUMED', 4],
    ]);

    const third = connect();
    await third.next((f) => f.op === 10);
    third.ws.send(JSON.stringify({ op: 6, d: { token: fake.token, session_id: 'gone', seq: 1 } }));
    expect(await third.next((f) => f.op === 9)).toMatchObject({ op: 9, d: false });
  });

  it('closes with 4012 for another API version', async () => {
    const c = connect('?v=9&encoding=json');
    expect(await c.closed).toBe(4012);
  });

  it('application commands: bulk overwrite checks names; an interaction is acknowledged once, in time, then answered by its token', async () => {
    const app = fake.bot.id;
    const bad = await api(`/applications/${app}/commands`, { method: 'PUT', body: JSON.stringify([{ name: 'Bad Name', description: 'x' }]) });
    expect(bad.status).toBe(400);
    const put = await api(`/applications/${app}/commands`, {
      method: 'PUT',
      body: JSON.stringify([{ name: 'status', description: 'Show the session', type: 1 }]),
    });
    expect(put.status).toBe(200);
    expect(() => fake.invokeCommand({ user: fake.fixtures.alice, channelId: fake.fixtures.generalChannelId, name: 'help' })).toThrow(/not registered/);

    const id = fake.invokeCommand({ user: fake.fixtures.alice, channelId: fake.fixtures.generalChannelId, name: 'status' });
    const token = fake.interactions.interactions.get(id)?.token ?? '';
    const noAuth = { 'Content-Type': 'application/json' };
    // Before any acknowledgement there is no response to fill in.
    const early = await fetch(`${fake.apiRoot}/v10/webhooks/${app}/${token}/messages/@original`, {
      method: 'PATCH',
      headers: noAuth,
      body: JSON.stringify({ content: 'x' }),
    });
    expect(early.status).toBe(404);
    const ack = await fetch(`${fake.apiRoot}/v10/interactions/${id}/${token}/callback`, {
      method: 'POST',
      headers: noAuth,
      body: JSON.stringify({ type: 5, data: { flags: 64 } }),
    });
    expect(ack.status).toBe(204);
    const again = await fetch(`${fake.apiRoot}/v10/interactions/${id}/${token}/callback`, {
      method: 'POST',
      headers: noAuth,
      body: JSON.stringify({ type: 5 }),
    });
    expect(((await again.json()) as { code: number }).code).toBe(40060);
    const filled = await fetch(`${fake.apiRoot}/v10/webhooks/${app}/${token}/messages/@original`, {
      method: 'PATCH',
      headers: noAuth,
      body: JSON.stringify({ content: 'Idle.' }),
    });
    expect(filled.status).toBe(200);
    expect(fake.interactions.interactions.get(id)?.messages).toEqual([{ id: expect.any(String), content: 'Idle.', flags: 64, via: 'original' }]);
  });

  it('buttons: components are checked as Discord does (5 per row, custom_id 1-100 characters), and a press must hit a real button', async () => {
    const channel = fake.fixtures.generalChannelId;
    const row = (n: number, id = (i: number) => `b${i}`) => ({
      type: 1,
      components: Array.from({ length: n }, (_, i) => ({ type: 2, style: 2, label: `B${i}`, custom_id: id(i) })),
    });
    const tooMany = await api(`/channels/${channel}/messages`, { method: 'POST', body: JSON.stringify({ content: 'pick', components: [row(6)] }) });
    expect(tooMany.status).toBe(400);
    const longId = await api(`/channels/${channel}/messages`, {
      method: 'POST',
      body: JSON.stringify({ content: 'pick', components: [row(1, () => 'x'.repeat(101))] }),
    });
    expect(longId.status).toBe(400);
    const ok = await api(`/channels/${channel}/messages`, { method: 'POST', body: JSON.stringify({ content: 'pick', components: [row(2)] }) });
    const message = (await ok.json()) as { id: string };
    expect(() => fake.pressButton({ user: fake.fixtures.bob, channelId: channel, messageId: message.id, customId: 'nope' })).toThrow(/no button/);
    const press = fake.pressButton({ user: fake.fixtures.bob, channelId: channel, messageId: message.id, customId: 'b1' });
    expect(fake.interactions.interactions.get(press)).toMatchObject({ type: 3, customId: 'b1', callbackType: null });
  });
});
