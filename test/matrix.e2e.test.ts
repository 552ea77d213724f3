/**
 * Matrix through the real gateway (issue 51): one `all` process with real Redis and a temp SQLite file, the Matrix
 * homeserver stand-in (client-server API: /sync long poll, send, media, rate limits) and the OpenAI stand-in. Each
 * test uses its own user and room, so tests do not see each other's messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { imagesOf, startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { png } from './fakes/media/images.js';
import { mediaContent, startMatrixFake, textContent, type MatrixFake } from './fakes/matrix/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { startGateway, isolatedEnv, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { makePdf } from './helpers/files.js';
import { matrixEnv, matrixTexts, waitForMatrix } from './helpers/matrix.js';
import { deleteRedisPrefix } from './helpers/redis-keys.js';
import { readStoreFile } from './helpers/store-rows.js';
import { testPrefix } from './helpers/test-run.js';

const REPLY_TIMEOUT_MS = 20_000;
const HOLD = 'hold';
const PHOTO = png(24, 16, { rgb: [10, 200, 30] });

let mx: MatrixFake;
let llm: FakeLLM;
let cluster: Cluster;
let fileHost = '';
let release: () => void = () => undefined;
let gate = new Promise<void>((resolve) => (release = resolve));
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
  if (text.startsWith(HOLD)) await gate;
  if (text.startsWith('long')) return { text: `${'word '.repeat(3_000)}end` };
  if (text.startsWith('pic') && turnStep(req) === 0) {
    return { toolCalls: [{ name: 'send_file', arguments: JSON.stringify({ url: `${fileHost}/photo.png`, caption: 'the picture' }) }] };
  }
  if (text.startsWith('pic')) return { text: 'Here it is.' };
  if (text.startsWith('fancy')) return { text: '**bold** and `code` <b>not html</b>' };
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
  const { createServer } = await import('node:http');
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PHOTO));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fileHost = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const env = matrixEnv(mx, llm, {
    HERALD_BUSY_INPUT_MODE: 'queue',
    HERALD_VISION_MODEL: 'openai:gpt-4.1-mini',
    HERALD_TYPING_DELAY_MS: '0',
    HERALD_FETCH_ALLOW_PRIVATE: 'true',
    HERALD_STT_MODEL: 'openai:gpt-4o-mini-transcribe',
    HERALD_MEDIA_MAX_FILE_BYTES: '100000',
    MATRIX_STATUS_REACTIONS: 'on',
  });
  cluster = await startCluster({ workers: 0, env });
  await waitForMatrix(mx);
}, 60_000);

afterEach(() => {
  release();
  gate = new Promise<void>((resolve) => (release = resolve));
});

afterAll(async () => {
  release();
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
