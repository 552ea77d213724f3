/**
 * Matrix through the real gateway (issue 51): one `all` process with real Redis and a temp SQLite file, the Matrix
 * homeserver stand-in (client-server API: /sync long poll, send, media, rate limits) and the OpenAI stand-in. Each
 * test uses its own user and room, so tests do not see each other's messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RESET_CANCELLED } from '../apps/gateway/src/edges/commands/handlers.js';
import { imagesOf, startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { png } from './fakes/media/images.js';
import { mediaContent, startMatrixFake, textContent, type MatrixFake } from './fakes/matrix/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { startGateway, isolatedEnv, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { CLARIFY_QUESTION, clarifyScript } from './helpers/clarify-script.js';
import { makePdf, serveBytes } from './helpers/files.js';
import { Gate } from './helpers/gate.js';
import { matrixEnv, matrixTexts, waitForMatrix } from './helpers/matrix.js';
import { waitFor } from './helpers/ports.js';
import { deleteRedisPrefix } from './helpers/redis-keys.js';
import { readStoreFile } from './helpers/store-rows.js';
import { testPrefix } from './helpers/test-run.js';

const REPLY_TIMEOUT_MS = 20_000;
const HOLD = 'hold';
const PHOTO = png(24, 16, { rgb: [10, 200, 30] });
const STREAMED = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty';
const INVITER = '@inviter:localhost';
/** An `m.room.encrypted` event's content (megolm): what an encrypted room's messages look like to the bot. */
const ENCRYPTED = { algorithm: 'm.megolm.v1.aes-sha2', ciphertext: 'AwgAEnACgAkLmt6qF84IK++J7UDH2Za1YVchHyprqTqsg', session_id: 'x', device_id: 'D' };
/** Routed to a profile whose busy input interrupts the running turn. */
const IMPATIENT = '@impatient:localhost';

let mx: MatrixFake;
let llm: FakeLLM;
let cluster: Cluster;
let fileHost = '';
const gate = new Gate();
let userSeq = 0;

function newUser(): string {
  userSeq += 1;
  return `@user${userSeq}x${Date.now() % 100_000}:localhost`;
}

/** A one-to-one room with a fresh user, the bot joined. */
function newDm(): { user: string; room: string } {
  const user = newUser();
  return { user, room: mx.createRoom({ members: [user], isDirect: true }) };
}

async function respond(req: RecordedRequest): Promise<Step> {
  const text = lastUserText(req);
  if (text.startsWith(HOLD)) await gate.wait();
  if (text.startsWith('long')) return { text: `${'word '.repeat(3_000)}end` };
  if (text.startsWith('pic') && turnStep(req) === 0) {
    return { toolCalls: [{ name: 'send_file', arguments: JSON.stringify({ url: `${fileHost}/photo.png`, caption: 'the picture' }) }] };
  }
  if (text.startsWith('pic')) return { text: 'Here it is.' };
  if (text.startsWith('book')) return clarifyScript(req);
  if (text.startsWith('fancy')) return { text: '**bold** and `code` <b>not html</b>' };
  if (text.startsWith('stream')) return { text: STREAMED, chunkDelayMs: 150 };
  const images = imagesOf(req);
  return { text: `ok: ${text}${images.length > 0 ? ` [${images.length} image]` : ''}` };
}

async function repliesIn(room: string, n: number, what: string): Promise<string[]> {
  return mx.waitFor(() => (matrixTexts(mx, room).length >= n ? matrixTexts(mx, room) : undefined), REPLY_TIMEOUT_MS, what);
}

beforeAll(async () => {
  mx = await startMatrixFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  const host = await serveBytes(PHOTO, 'image/png');
  fileHost = host.url;
  afterAll(() => host.close());
  const env = matrixEnv(mx, llm, {
    HERALD_BUSY_INPUT_MODE: 'queue',
    HERALD_VISION_MODEL: 'openai:gpt-4.1-mini',
    HERALD_TYPING_DELAY_MS: '0',
    HERALD_FETCH_ALLOW_PRIVATE: 'true',
    HERALD_STT_MODEL: 'openai:gpt-4o-mini-transcribe',
    HERALD_MEDIA_MAX_FILE_BYTES: '100000',
    MATRIX_STATUS_REACTIONS: 'on',
    MATRIX_INVITE_FROM: INVITER,
    // clarify is in the full toolset.
    HERALD_TOOLSETS: 'full',
    HERALD_PROFILES: JSON.stringify({ impatient: { busy_input_mode: 'interrupt' } }),
    HERALD_ROUTES: JSON.stringify([{ platform: 'matrix', user: IMPATIENT, profile: 'impatient' }]),
  });
  cluster = await startCluster({ workers: 0, env });
  await waitForMatrix(mx);
}, 120_000);

afterEach(() => gate.reset());

afterAll(async () => {
  gate.release();
  await cluster?.stop();
  await mx?.close();
  await llm?.close();
});

describe('Matrix messages', () => {
  it('a DM gets one reply as HTML, with typing and a read receipt, stored with source matrix', async () => {
    const { user, room } = newDm();
    const id = mx.send(room, user, textContent('fancy please'));
    await repliesIn(room, 1, 'the reply');
    const [reply] = mx.shown(room);
    expect(reply.body).toBe('**bold** and `code` <b>not html</b>');
    expect(reply.content.format).toBe('org.matrix.custom.html');
    expect(reply.formattedBody).toBe('<strong>bold</strong> and <code>code</code> &lt;b&gt;not html&lt;/b&gt;');
    expect((reply.content['m.relates_to'] as { 'm.in_reply_to': { event_id: string } })['m.in_reply_to'].event_id).toBe(id);
    expect(mx.typing.some((t) => t.roomId === room && t.typing)).toBe(true);
    await mx.waitFor(() => mx.receipts.some((r) => r.roomId === room && r.eventId === id), REPLY_TIMEOUT_MS, 'the read receipt');
    const rows = readStoreFile(cluster.dbPath, (db) => db.prepare(`SELECT key, source, user_id FROM sessions WHERE user_id = ?`).all(user));
    expect(rows).toEqual([{ key: `agent:main:matrix:dm:${room}`, source: 'matrix', user_id: user }]);
    expect(matrixTexts(mx, room)).toHaveLength(1);
  });
});

describe('Matrix rooms, threads and replies', () => {
  it('a room message without a mention is ignored; with one (m.mentions or the display name) it is answered', async () => {
    const a = newUser();
    const b = newUser();
    const room = mx.createRoom({ members: [a, b], name: 'team' });
    mx.send(room, a, textContent('just chatting among us'));
    mx.send(room, b, textContent('Herald: name one colour', {}));
    await repliesIn(room, 1, 'the answer to the named mention');
    mx.send(room, a, textContent('what about shapes', { mentions: [mx.userId] }));
    const replies = await repliesIn(room, 2, 'the answer to the m.mentions mention');
    expect(replies).toEqual(['ok: name one colour', 'ok: what about shapes']);
    expect(llm.requests.some((r) => lastUserText(r).includes('just chatting'))).toBe(false);
  });

  it('a mention in a thread is answered in the thread, and later thread messages need no mention', async () => {
    const a = newUser();
    const room = mx.createRoom({ members: [a, newUser()] });
    const root = mx.send(room, a, textContent('a topic to discuss'));
    mx.send(room, a, textContent('thread question', { thread: root, mentions: [mx.userId] }));
    await repliesIn(room, 1, 'the thread answer');
    mx.send(room, a, textContent('follow-up without mention', { thread: root }));
    const replies = await repliesIn(room, 2, 'the follow-up answer');
    expect(replies).toEqual(['ok: thread question', 'ok: follow-up without mention']);
    for (const m of mx.shown(room)) {
      const rel = m.content['m.relates_to'] as { rel_type: string; event_id: string };
      expect(rel).toMatchObject({ rel_type: 'm.thread', event_id: root });
    }
    const keys = readStoreFile(cluster.dbPath, (db) => db.prepare(`SELECT DISTINCT key FROM sessions WHERE user_id = ?`).all(a));
    expect(keys).toEqual([{ key: expect.stringContaining(root) }]);
  });

  it('a reply to an earlier message carries its text to the model', async () => {
    const a = newUser();
    const b = newUser();
    const room = mx.createRoom({ members: [a, b] });
    const said = mx.send(room, a, textContent('the secret word is pineapple'));
    mx.send(room, b, textContent('what did they say?', { replyTo: said, mentions: [mx.userId] }));
    await repliesIn(room, 1, 'the answer to the reply');
    const req = llm.requests.find((r) => lastUserText(r).includes('what did they say?'))!;
    expect(JSON.stringify(req.body)).toContain('pineapple');
  });

  it('an invite from an allowed user is joined; one from anyone else is declined and logged', async () => {
    const stranger = newUser();
    const welcome = mx.createRoom({ members: [INVITER], bot: 'none' });
    const other = mx.createRoom({ members: [stranger], bot: 'none' });
    mx.invite(welcome, INVITER);
    mx.invite(other, stranger);
    await mx.waitFor(() => mx.joins.includes(welcome) && mx.leaves.includes(other), REPLY_TIMEOUT_MS, 'the join and the decline');
    expect(mx.joins).not.toContain(other);
    await cluster.ingress.waitForLog((l) => String(l.msg).includes('invite from someone not on MATRIX_INVITE_FROM'), 'the decline log');
    mx.send(welcome, INVITER, textContent('thanks for joining', { mentions: [mx.userId] }));
    expect(await repliesIn(welcome, 1, 'the answer in the joined room')).toEqual(['ok: thanks for joining']);
  });

  it('an encrypted room is refused with a message, once, and nothing reaches the model', async () => {
    const a = newUser();
    const room = mx.createRoom({ members: [a], encrypted: true, isDirect: true });
    mx.send(room, a, ENCRYPTED, { eventType: 'm.room.encrypted' });
    mx.send(room, a, ENCRYPTED, { eventType: 'm.room.encrypted' });
    const [refusal] = await repliesIn(room, 1, 'the refusal');
    expect(refusal).toContain('this room is encrypted'.replace('this', 'This'));
    await cluster.ingress.waitForLog((l) => String(l.msg).includes('end-to-end encrypted'), 'the refusal log');
    mx.send(room, a, textContent('plain text in a locked room'));
    const { user: b, room: after } = newDm();
    mx.send(after, b, textContent('after the encrypted room'));
    await repliesIn(after, 1, 'a later reply elsewhere');
    expect(matrixTexts(mx, room)).toHaveLength(1);
    expect(llm.requests.some((r) => lastUserText(r).includes('locked room'))).toBe(false);
  });
});

describe('Matrix media', () => {
  it('a picture is fetched through the authenticated media endpoint and reaches the model as an image', async () => {
    const { user, room } = newDm();
    const mxc = mx.uploadFromUser(PHOTO, 'image/png', 'photo.png');
    mx.send(room, user, mediaContent('m.image', mxc, { body: 'what is this', filename: 'photo.png', mimetype: 'image/png', size: PHOTO.length }));
    const [reply] = await repliesIn(room, 1, 'the reply to the picture');
    expect(reply).toMatch(/^ok: what is this[\s\S]*\[1 image\]$/);
    expect(mx.downloads).toContain(mxc);
    expect(mx.requestsTo('/_matrix/media/v3/download')).toEqual([]);
  });

  it('a voice message reaches the model as its transcript; a PDF as its text', async () => {
    const { user, room } = newDm();
    const words = 'remind me to water the plants';
    const voice = mx.uploadFromUser(Buffer.from(`OggS ${words}`), 'audio/ogg', 'voice.ogg');
    mx.send(room, user, mediaContent('m.audio', voice, { body: 'voice.ogg', mimetype: 'audio/ogg', voice: true, durationMs: 2000 }));
    const [heard] = await repliesIn(room, 1, 'the reply to the voice message');
    expect(heard).toContain(`transcribed: ${words}`);
    const pdf = mx.uploadFromUser(makePdf(['Invoice matrix 4711', 'Total due: 99 EUR']), 'application/pdf', 'invoice.pdf');
    mx.send(room, user, mediaContent('m.file', pdf, { body: 'sum it up', filename: 'invoice.pdf', mimetype: 'application/pdf' }));
    await repliesIn(room, 2, 'the answer to the PDF');
    const seen = lastUserText(llm.requests.find((r) => lastUserText(r).includes('sum it up'))!);
    expect(seen).toContain('Total due: 99 EUR');
  });

  it('a file the agent sends is uploaded and posted as an m.image', async () => {
    const { user, room } = newDm();
    mx.send(room, user, textContent('pic please'));
    const image = await mx.waitFor(() => mx.sentIn(room).find((e) => e.content.msgtype === 'm.image'), REPLY_TIMEOUT_MS, 'the image');
    const upload = mx.uploads.find((u) => u.mxc === image.content.url)!;
    expect(upload.bytes.equals(PHOTO)).toBe(true);
    expect(image.content.body).toBe('the picture');
    await repliesIn(room, 1, 'the text after the picture');
  });
});

describe('Matrix delivery', () => {
  it('a long reply is split into messages under the limit, nothing lost', async () => {
    const { user, room } = newDm();
    mx.send(room, user, textContent('long please'));
    const parts = await mx.waitFor(
      () => {
        const t = matrixTexts(mx, room);
        return t.length > 1 && t.join(' ').includes('end') ? t : undefined;
      },
      REPLY_TIMEOUT_MS,
      'the whole long reply',
    );
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(8_000);
    expect(
      parts
        .join(' ')
        .split(/\s+/)
        .filter((w) => w === 'word'),
    ).toHaveLength(3_000);
  });

  it('M_LIMIT_EXCEEDED on the send is waited out and the reply arrives once', async () => {
    const { user, room } = newDm();
    mx.rateLimitNext(2, 300, `/rooms/${room}/send/m.room.message/`);
    mx.send(room, user, textContent('rate limited'));
    await repliesIn(room, 1, 'the reply after the rate limit');
    mx.send(room, user, textContent('and then'));
    expect(await repliesIn(room, 2, 'the next reply')).toEqual(['ok: rate limited', 'ok: and then']);
    expect(mx.requests.some((r) => r.status === 429 && r.path.includes(room))).toBe(true);
  });

  it('status reactions: 👀 while working, then ✅ (the 👀 taken back)', async () => {
    const { user, room } = newDm();
    const id = mx.send(room, user, textContent('react please'));
    await repliesIn(room, 1, 'the reply');
    const done = await mx.waitFor(
      () => mx.sentIn(room, 'm.reaction').find((e) => (e.content['m.relates_to'] as { key: string }).key === '✅'),
      REPLY_TIMEOUT_MS,
      'the done reaction',
    );
    expect((done.content['m.relates_to'] as { event_id: string }).event_id).toBe(id);
    const eyes = mx.sentIn(room, 'm.reaction').find((e) => (e.content['m.relates_to'] as { key: string }).key === '👀');
    expect(eyes).toBeDefined();
    await mx.waitFor(() => mx.sentIn(room, 'm.room.redaction').some((e) => e.redacts === eyes?.eventId), REPLY_TIMEOUT_MS, 'the 👀 taken back');
  });

  it('the same event delivered twice is answered once', async () => {
    const { user, room } = newDm();
    const id = mx.send(room, user, textContent('only once please'));
    await repliesIn(room, 1, 'the reply');
    const since = mx.requestsTo('/sync').at(-1)?.query.since;
    const event = { type: 'm.room.message', event_id: id, sender: user, origin_server_ts: Date.now(), content: textContent('only once please') };
    mx.nextSyncBody({ next_batch: since, rooms: { join: { [room]: { timeline: { events: [event] } } } } });
    mx.send(room, user, textContent('next one'));
    await repliesIn(room, 2, 'the second reply');
    expect(matrixTexts(mx, room)).toEqual(['ok: only once please', 'ok: next one']);
  });

  it('malformed /sync answers and events lose nothing and crash nothing', async () => {
    const { user, room } = newDm();
    const since = mx.requestsTo('/sync').at(-1)?.query.since;
    mx.nextSyncBody('{"next_batch": ');
    mx.nextSyncBody({
      next_batch: since,
      rooms: {
        join: {
          [room]: { timeline: { events: [null, 5, { type: 'm.room.message' }, { type: 'm.room.message', event_id: '$x', sender: 'nobody', content: 'no' }] } },
        },
        invite: 7,
      },
    });
    mx.nextSyncBody({
      next_batch: since,
      rooms: { join: { 'not-a-room': { timeline: { events: [{}] } }, [room]: { timeline: 'nope', state: { events: [1] } } } },
    });
    mx.nextSyncBody([1, 2, 3]);
    mx.send(room, user, textContent('still here?'));
    expect(await repliesIn(room, 1, 'the reply after the garbage')).toEqual(['ok: still here?']);
    expect(cluster.ingress.proc.exitCode).toBeNull();
  });
});

describe('Matrix commands and busy input', () => {
  it('commands: /help answers without the model, /new starts a new session', async () => {
    const { user, room } = newDm();
    mx.send(room, user, textContent('hi before new'));
    await repliesIn(room, 1, 'the first reply');
    mx.send(room, user, textContent('/help'));
    const help = await repliesIn(room, 2, 'the help');
    expect(help[1]).toMatch(/\/new/);
    mx.send(room, user, textContent('/new'));
    await repliesIn(room, 3, 'the /new answer');
    expect(llm.requests.some((r) => ['/help', '/new'].includes(lastUserText(r)))).toBe(false);
    mx.send(room, user, textContent('after new'));
    await repliesIn(room, 4, 'the reply after /new');
    const sessions = readStoreFile(cluster.dbPath, (db) => db.prepare(`SELECT id FROM sessions WHERE user_id = ?`).all(user));
    expect(sessions).toHaveLength(2);
  });

  it('busy (queue mode): a message sent while a turn runs is answered after it, in order', async () => {
    const { user, room } = newDm();
    mx.send(room, user, textContent('hold first'));
    await mx.waitFor(() => llm.requests.some((r) => lastUserText(r) === 'hold first'), REPLY_TIMEOUT_MS, 'the held turn');
    const second = mx.send(room, user, textContent('second'));
    // Taken by the gateway (its read receipt follows the hand-over) while the first turn still runs.
    await mx.waitFor(() => mx.receipts.some((r) => r.eventId === second), REPLY_TIMEOUT_MS, 'the second message taken');
    gate.release();
    const replies = await repliesIn(room, 3, 'the acknowledgement and both replies');
    expect(replies[0]).toMatch(/Queued/);
    expect(replies.slice(1)).toEqual(['ok: hold first', 'ok: second']);
  });
});

describe('Matrix busy input (interrupt)', () => {
  it('a new message interrupts the running turn, which is answered once together with it', async () => {
    const room = mx.createRoom({ members: [IMPATIENT], isDirect: true });
    mx.send(room, IMPATIENT, textContent('hold this long task'));
    await mx.waitFor(() => llm.requests.some((r) => lastUserText(r) === 'hold this long task'), REPLY_TIMEOUT_MS, 'the held turn');
    mx.send(room, IMPATIENT, textContent('do this instead'));
    // The interrupted turn is taken up again with the new message in it.
    await mx.waitFor(() => llm.requests.some((r) => lastUserText(r).endsWith('do this instead')), REPLY_TIMEOUT_MS, 'the turn with both');
    gate.release();
    const [reply] = await repliesIn(room, 1, 'the one answer');
    expect(reply).toContain('do this instead');
    mx.send(room, IMPATIENT, textContent('and one more'));
    expect(await repliesIn(room, 2, 'a later answer')).toEqual([reply, 'ok: and one more']);
  });
});

describe('Matrix choices', () => {
  it('a clarify question comes as a numbered list; replying with a number answers it', async () => {
    const { user, room } = newDm();
    mx.send(room, user, textContent('book a table'));
    const question = await mx.waitFor(() => mx.shown(room).find((m) => m.body.includes(CLARIFY_QUESTION)), REPLY_TIMEOUT_MS, 'the question');
    expect(question.body).toContain('1. 2\n2. 4');
    expect(question.formattedBody).toContain('<ol><li>2</li><li>4</li></ol>');
    mx.send(room, user, textContent('2'));
    const answer = await mx.waitFor(() => matrixTexts(mx, room).find((t) => t.startsWith('Booked.')), REPLY_TIMEOUT_MS, 'the booking');
    expect(answer).toContain('4');
  });
});

describe('Matrix operations', () => {
  it('/health/detailed lists Matrix as connected, with its last sync', async () => {
    const res = await fetch(`${cluster.ingress.url}/health/detailed`);
    const body = (await res.json()) as { platforms: Record<string, { state: string; last_event_at: string | null }> };
    expect(body.platforms.matrix.state).toBe('connected');
    expect(Date.parse(body.platforms.matrix.last_event_at ?? '')).toBeGreaterThan(Date.now() - 10 * 60_000);
    expect(body.platforms.discord.state).toBe('disabled');
  });

  it('never writes the access token to its logs', () => {
    expect(cluster.ingress.output.join('\n')).not.toContain(mx.accessToken);
  });
});

describe('Matrix restarts and streaming (a gateway of its own)', () => {
  let gw: GatewayProcess | undefined;

  it('the sync position, the refused rooms and the offered choices survive a restart: nothing answered or refused twice, nothing lost, a number still picks; streams as edits', async () => {
    const other = await startMatrixFake();
    const dir = mkdtempSync(join(tmpdir(), 'herald-matrix-'));
    const prefix = testPrefix('mxrestart');
    const redis = new Redis('redis://127.0.0.1:6379');
    try {
      const env = isolatedEnv(
        matrixEnv(other, llm, { HERALD_DB: join(dir, 'herald.db'), HERALD_REDIS_PREFIX: prefix, MATRIX_STREAMING: 'true', HERALD_CONFIRM_RESET: 'true' }),
      );
      gw = await startGateway({ env, args: ['--role', 'all'] });
      await waitForMatrix(other);
      const user = '@restart:localhost';
      const room = other.createRoom({ members: [user], isDirect: true });
      const locked = other.createRoom({ members: [user], encrypted: true, isDirect: true });
      other.send(locked, user, ENCRYPTED, { eventType: 'm.room.encrypted' });
      await other.waitFor(() => matrixTexts(other, locked).length === 1 || undefined, REPLY_TIMEOUT_MS, 'the refusal');
      other.send(room, user, textContent('before restart'));
      await other.waitFor(() => matrixTexts(other, room).length === 1 || undefined, REPLY_TIMEOUT_MS, 'the first reply');
      // Choices offered before the restart: the restarted /sync does not show them again, the memory has them.
      const choosing = other.createRoom({ members: [user], isDirect: true });
      other.send(choosing, user, textContent('/new'));
      const question = await other.waitFor(() => matrixTexts(other, choosing)[0], REPLY_TIMEOUT_MS, 'the /new question');
      expect(question).toContain('2. Keep this one');
      // Stopped only once the /sync showing the question was taken (its offer kept): else the restarted /sync would
      // show the question again, and the test would pass without the memory.
      const offerKey = `${prefix}:matrix-offer:${other.userId}:matrix:${choosing}`;
      await waitFor(async () => (await redis.exists(offerKey)) === 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the offer kept in Redis' });
      await gw.stop();
      other.send(locked, user, ENCRYPTED, { eventType: 'm.room.encrypted' });
      other.send(room, user, textContent('stream while down'));
      const syncs = other.requestsTo('/sync').length;
      gw = await startGateway({ env, args: ['--role', 'all'] });
      await waitForMatrix(other, syncs);
      const streamed = await other.waitFor(
        () => other.shown(room).find((m) => m.body === STREAMED),
        REPLY_TIMEOUT_MS,
        'the streamed reply edited into the full text',
      );
      expect(streamed.edits).toBeGreaterThan(0);
      const edit = other.sentIn(room).find((e) => (e.content['m.relates_to'] as { rel_type?: string } | undefined)?.rel_type === 'm.replace');
      expect(edit?.content['m.new_content']).toBeDefined();
      expect(matrixTexts(other, room)).toEqual(['ok: before restart', STREAMED]);
      other.send(choosing, user, textContent('2'));
      expect(await other.waitFor(() => matrixTexts(other, choosing)[1], REPLY_TIMEOUT_MS, 'the choice')).toBe(RESET_CANCELLED);
      expect(llm.requests.filter((r) => lastUserText(r) === 'before restart')).toHaveLength(1);
      // The encrypted message sent while it was down came in the first /sync after the restart; the next /sync is
      // asked only once that batch was handled: by then a second refusal would have been posted.
      await other.waitFor(() => other.requestsTo('/sync').length >= syncs + 2 || undefined, REPLY_TIMEOUT_MS, 'the /sync after the first batch');
      expect(matrixTexts(other, locked)).toHaveLength(1);
    } finally {
      await gw?.stop();
      gw = undefined;
      await other.close();
      await deleteRedisPrefix(prefix);
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
