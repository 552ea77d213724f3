/** The stand-in speaks the Client-Server API wire format: checked with plain fetch, no client library in between. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MatrixFake, mediaContent, startMatrixFake, textContent } from './index.js';

let hs: MatrixFake;
const alice = '@alice:localhost';
const bob = '@bob:localhost';

beforeEach(async () => {
  hs = await startMatrixFake();
});

afterEach(async () => {
  await hs.close();
});

// biome-ignore lint/suspicious/noExplicitAny: wire-format JSON, asserted on by shape
type Body = Record<string, any>;

async function call(method: string, path: string, body?: Body | string, token: string | null = hs.accessToken) {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${hs.url}${path}`, { method, headers, ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as Body };
}

const v3 = (path: string) => `/_matrix/client/v3${path}`;
const enc = encodeURIComponent;

describe('Matrix homeserver stand-in', () => {
  it('answers /versions without a token and refuses other routes without a valid one', async () => {
    expect((await call('GET', '/_matrix/client/versions', undefined, null)).body.versions).toContain('v1.11');
    expect(await call('GET', v3('/account/whoami'), undefined, null)).toMatchObject({ status: 401, body: { errcode: 'M_MISSING_TOKEN' } });
    expect(await call('GET', v3('/account/whoami'), undefined, 'syt_wrong')).toMatchObject({
      status: 401,
      body: { errcode: 'M_UNKNOWN_TOKEN', soft_logout: false },
    });
    expect((await call('GET', v3('/account/whoami'))).body).toEqual({ user_id: hs.userId, device_id: 'HERALDDEV', is_guest: false });
    expect(await call('GET', v3('/no/such/thing'))).toMatchObject({ status: 404, body: { errcode: 'M_UNRECOGNIZED' } });
    expect(await call('DELETE', v3('/account/whoami'))).toMatchObject({ status: 405, body: { errcode: 'M_UNRECOGNIZED' } });
  });

  it('initial sync shows joined rooms with state and timeline, invites with stripped state', async () => {
    const dm = hs.createRoom({ members: [alice], isDirect: true });
    const room = hs.createRoom({ members: [bob, alice], name: 'Ops', bot: 'invite' });
    const sync = (await call('GET', v3('/sync'))).body;
    expect(sync.next_batch).toMatch(/^s\d+_/);
    const joined = sync.rooms.join[dm];
    expect(joined.state.events.length + joined.timeline.events.length).toBeGreaterThan(4);
    expect(joined.summary['m.joined_member_count']).toBe(2);
    const invite = sync.rooms.invite[room].invite_state.events as Body[];
    expect(invite.find((e) => e.type === 'm.room.member' && e.state_key === hs.userId)).toMatchObject({ sender: bob, content: { membership: 'invite' } });
    expect(invite.find((e) => e.type === 'm.room.name')?.content.name).toBe('Ops');
    expect(sync.account_data.events[0]).toEqual({ type: 'm.direct', content: { [alice]: [dm] } });
  });

  it('long-polls: an empty incremental sync waits until a user speaks, then carries only the new event', async () => {
    const dm = hs.createRoom({ members: [alice] });
    const first = (await call('GET', v3('/sync'))).body;
    const polling = call('GET', v3(`/sync?since=${first.next_batch}&timeout=20000`));
    await hs.waitFor(() => hs.requestsTo('/sync').length === 2, 5000, 'second sync arrives');
    const id = hs.send(dm, alice, textContent('hello', { mentions: [hs.userId] }));
    const next = (await polling).body;
    const events = next.rooms.join[dm].timeline.events as Body[];
    expect(events).toEqual([expect.objectContaining({ event_id: id, sender: alice, type: 'm.room.message' })]);
    expect(events[0].room_id).toBeUndefined();
    expect(next.rooms.join[dm].timeline.limited).toBe(false);
    expect(next.next_batch).not.toBe(first.next_batch);
    const empty = await call('GET', v3(`/sync?since=${next.next_batch}&timeout=0`));
    expect(empty.body).toEqual({ next_batch: next.next_batch });
    expect((await call('GET', v3('/sync?since=garbage'))).body.errcode).toBe('M_INVALID_PARAM');
  });

  it('answers a pending long poll with a queued raw body, then serves normally again from syncToken()', async () => {
    const since = (await call('GET', v3('/sync'))).body.next_batch;
    const polling = fetch(`${hs.url}${v3(`/sync?since=${since}&timeout=20000`)}`, { headers: { authorization: `Bearer ${hs.accessToken}` } });
    await hs.waitFor(() => hs.requestsTo('/sync').length === 2, 5000, 'the long poll');
    hs.nextSyncBody('{"next_batch": 12, "rooms": [');
    const raw = await polling;
    expect([raw.status, await raw.text()]).toEqual([200, '{"next_batch": 12, "rooms": [']);
    hs.syncDelayMs = 5;
    const after = await call('GET', v3(`/sync?since=${hs.syncToken()}&timeout=0`));
    expect(after.body).toEqual({ next_batch: hs.syncToken() });
    expect(hs.requestsTo('/sync').map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('makes a fresh token for the same position each time, each one taken as since, a changed one refused', async () => {
    const [a, b] = [hs.freshSyncToken(), hs.freshSyncToken()];
    expect(a).not.toBe(b);
    expect(a.startsWith(`${hs.syncToken()}_`)).toBe(true);
    for (const since of [a, b]) expect((await call('GET', v3(`/sync?since=${since}&timeout=0`))).body).toEqual({ next_batch: hs.syncToken() });
    expect((await call('GET', v3(`/sync?since=${a}x&timeout=0`))).body.errcode).toBe('M_INVALID_PARAM');
  });

  it('moves a room from invite to join (with its full state) to leave as the bot joins and is kicked', async () => {
    const room = hs.createRoom({ members: [bob], bot: 'none', name: 'Later' });
    const s0 = (await call('GET', v3('/sync'))).body.next_batch;
    hs.invite(room, bob);
    const s1 = (await call('GET', v3(`/sync?since=${s0}`))).body;
    expect(Object.keys(s1.rooms.invite)).toEqual([room]);
    await call('POST', v3(`/rooms/${enc(room)}/join`), {});
    const s2 = (await call('GET', v3(`/sync?since=${s1.next_batch}`))).body;
    const joined = s2.rooms.join[room];
    const all = [...joined.state.events, ...joined.timeline.events] as Body[];
    expect(all.find((e) => e.type === 'm.room.name')?.content.name).toBe('Later');
    expect(joined.timeline.events.at(-1)).toMatchObject({ type: 'm.room.member', state_key: hs.userId, content: { membership: 'join' } });
    expect(s2.rooms.invite).toBeUndefined();
    hs.setMembership(room, bob, hs.userId, 'leave');
    const s3 = (await call('GET', v3(`/sync?since=${s2.next_batch}`))).body;
    expect(s3.rooms.leave[room].timeline.events.at(-1)).toMatchObject({ sender: bob, content: { membership: 'leave' } });
    expect(s3.rooms.join).toBeUndefined();
    expect((await call('PUT', v3(`/rooms/${enc(room)}/send/m.room.message/k1`), { msgtype: 'm.text', body: 'x' })).body.errcode).toBe('M_FORBIDDEN');
  });

  it('marks a gap bigger than the filter limit as limited with prev_batch', async () => {
    const dm = hs.createRoom({ members: [alice] });
    const filter = (await call('POST', v3(`/user/${enc(hs.userId)}/filter`), { room: { timeline: { limit: 3 } } })).body.filter_id;
    const since = (await call('GET', v3(`/sync?filter=${filter}`))).body.next_batch;
    for (let i = 0; i < 5; i++) hs.send(dm, alice, textContent(`m${i}`));
    const tl = (await call('GET', v3(`/sync?filter=${filter}&since=${since}`))).body.rooms.join[dm].timeline;
    expect(tl.limited).toBe(true);
    expect(tl.prev_batch).toEqual(expect.any(String));
    expect((tl.events as Body[]).map((e) => e.content.body)).toEqual(['m2', 'm3', 'm4']);
    // The gap is paged back from prev_batch with /messages.
    const page = (await call('GET', v3(`/rooms/${enc(dm)}/messages?dir=b&limit=2&from=${tl.prev_batch}`))).body;
    expect((page.chunk as Body[]).map((e) => e.content.body)).toEqual(['m1', 'm0']);
    expect(page.chunk[0].room_id).toBe(dm);
    const older = (await call('GET', v3(`/rooms/${enc(dm)}/messages?dir=b&limit=100&from=${page.end}`))).body;
    expect((older.chunk as Body[]).every((e) => e.type !== 'm.room.message')).toBe(true);
    expect(older.end).toBeUndefined();
    expect((await call('GET', v3(`/rooms/${enc(dm)}/messages?from=bogus`))).body.errcode).toBe('M_INVALID_PARAM');
  });

  it('send is idempotent per txnId, echoes the transaction id to the bot, and edits fold into what the room shows', async () => {
    const dm = hs.createRoom({ members: [alice] });
    const since = (await call('GET', v3('/sync'))).body.next_batch;
    const put = (txn: string, content: Body | string) => call('PUT', v3(`/rooms/${enc(dm)}/send/m.room.message/${txn}`), content);
    const a = await put('t1', { msgtype: 'm.text', body: 'draft' });
    const again = await put('t1', { msgtype: 'm.text', body: 'draft' });
    expect(again.body.event_id).toBe(a.body.event_id);
    await put('t2', {
      msgtype: 'm.text',
      body: '* final',
      'm.new_content': { msgtype: 'm.text', body: 'final' },
      'm.relates_to': { rel_type: 'm.replace', event_id: a.body.event_id },
    });
    expect(hs.sent).toHaveLength(2);
    expect(hs.shown(dm)).toEqual([expect.objectContaining({ eventId: a.body.event_id, body: 'final', edits: 1, redacted: false })]);
    const echoed = (await call('GET', v3(`/sync?since=${since}`))).body.rooms.join[dm].timeline.events as Body[];
    expect(echoed[0].unsigned.transaction_id).toBe('t1');
    await call('PUT', v3(`/rooms/${enc(dm)}/redact/${enc(a.body.event_id)}/t3`), { reason: 'x' });
    expect(hs.shown(dm)[0].redacted).toBe(true);
    expect((await put('t4', 'not json')).body.errcode).toBe('M_NOT_JSON');
    expect((await put('t5', '[1]')).body.errcode).toBe('M_BAD_JSON');
    expect((await put('t6', { body: 'x'.repeat(70_000) })).body.errcode).toBe('M_TOO_LARGE');
  });

  it('rate limits with M_LIMIT_EXCEEDED, retry_after_ms and Retry-After, then lets the retry through', async () => {
    const dm = hs.createRoom({ members: [alice] });
    hs.rateLimitNext(1, 1500);
    const path = v3(`/rooms/${enc(dm)}/send/m.room.message/r1`);
    const limited = await call('PUT', path, { msgtype: 'm.text', body: 'x' });
    expect(limited).toMatchObject({ status: 429, body: { errcode: 'M_LIMIT_EXCEEDED', retry_after_ms: 1500 } });
    expect(limited.headers.get('retry-after')).toBe('2');
    expect((await call('PUT', path, { msgtype: 'm.text', body: 'x' })).status).toBe(200);
    hs.failNext('/typing/', 500, 'M_UNKNOWN', { times: 1 });
    expect((await call('PUT', v3(`/rooms/${enc(dm)}/typing/${enc(hs.userId)}`), { typing: true, timeout: 30000 })).status).toBe(500);
    expect((await call('PUT', v3(`/rooms/${enc(dm)}/typing/${enc(hs.userId)}`), { typing: true, timeout: 30000 })).status).toBe(200);
    expect(hs.typing).toEqual([{ roomId: dm, userId: hs.userId, typing: true, timeout: 30000 }]);
  });

  it('serves media only through the authenticated download, and enforces the upload size', async () => {
    const small = await startMatrixFake({ maxUploadBytes: 1000 });
    try {
      const mxc = small.uploadFromUser(Buffer.from('png-bytes'), 'image/png', 'cat.png');
      const [server, id] = mxc.slice('mxc://'.length).split('/');
      const dl = (token: string | null) =>
        fetch(`${small.url}/_matrix/client/v1/media/download/${server}/${id}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
      expect((await dl(null)).status).toBe(401);
      const ok = await dl(small.accessToken);
      expect([ok.status, ok.headers.get('content-type'), Buffer.from(await ok.arrayBuffer()).toString()]).toEqual([200, 'image/png', 'png-bytes']);
      expect((await fetch(`${small.url}/_matrix/media/v3/download/${server}/${id}`)).status).toBe(404);
      const missing = await fetch(`${small.url}/_matrix/client/v1/media/download/${server}/nope`, {
        headers: { authorization: `Bearer ${small.accessToken}` },
      });
      expect([missing.status, ((await missing.json()) as Body).errcode]).toEqual([404, 'M_NOT_FOUND']);
      const up = (n: number) =>
        fetch(`${small.url}/_matrix/media/v3/upload?filename=a.bin`, {
          method: 'POST',
          headers: { authorization: `Bearer ${small.accessToken}`, 'content-type': 'application/octet-stream' },
          body: Buffer.alloc(n),
        });
      expect(((await (await up(10)).json()) as Body).content_uri).toMatch(/^mxc:\/\/localhost\//);
      const big = await up(2000);
      expect([big.status, ((await big.json()) as Body).errcode]).toEqual([413, 'M_TOO_LARGE']);
      expect(small.uploads.map((u) => [u.filename, u.bytes.length])).toEqual([['a.bin', 10]]);
      const cfg = await fetch(`${small.url}/_matrix/client/v1/media/config`, { headers: { authorization: `Bearer ${small.accessToken}` } });
      expect(await cfg.json()).toEqual({ 'm.upload.size': 1000 });
    } finally {
      await small.close();
    }
  });

  it('joins invites, reports encryption state, members and profiles', async () => {
    const room = hs.createRoom({ members: [bob], bot: 'none', encrypted: true, name: 'Secret' });
    expect((await call('POST', v3(`/join/${enc(room)}`), {})).body.errcode).toBe('M_FORBIDDEN');
    hs.invite(room, bob);
    expect((await call('POST', v3(`/join/${enc(room)}`), {})).body).toEqual({ room_id: room });
    expect(hs.joins).toEqual([room]);
    expect((await call('GET', v3(`/rooms/${enc(room)}/state/m.room.encryption/`))).body.algorithm).toBe('m.megolm.v1.aes-sha2');
    const plain = hs.createRoom({ members: [alice] });
    expect(await call('GET', v3(`/rooms/${enc(plain)}/state/m.room.encryption/`))).toMatchObject({ status: 404, body: { errcode: 'M_NOT_FOUND' } });
    hs.setDisplayName(alice, 'Alice A.');
    expect((await call('GET', v3(`/rooms/${enc(plain)}/joined_members`))).body.joined[alice].display_name).toBe('Alice A.');
    expect((await call('GET', v3(`/profile/${enc(alice)}/displayname`))).body).toEqual({ displayname: 'Alice A.' });
    expect((await call('GET', v3(`/profile/${enc('@ghost:localhost')}`))).status).toBe(404);
    const img = hs.send(plain, alice, mediaContent('m.image', hs.uploadFromUser(Buffer.from('x'), 'image/png'), { mimetype: 'image/png' }));
    expect((await call('POST', v3(`/rooms/${enc(plain)}/receipt/m.read/${enc(img)}`), {})).status).toBe(200);
    expect(hs.receipts).toEqual([{ roomId: plain, eventId: img, type: 'm.read', via: 'receipt' }]);
    expect((await call('POST', v3(`/rooms/${enc(plain)}/leave`), {})).status).toBe(200);
    expect(hs.leaves).toEqual([plain]);
  });
});
