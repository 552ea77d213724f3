/**
 * WhatsApp (Cloud API) through the real gateway (issue 51): one `all` process with real Redis and a temp SQLite
 * file, the WhatsApp stand-in (Graph API + a webhook sender that signs with the app secret) and the OpenAI
 * stand-in. Each test uses its own user (wa_id), so tests do not see each other's messages.
 */
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { imagesOf } from './fakes/llm/index.js';
import { png } from './fakes/media/images.js';
import { startWhatsAppFake, messagesPayload, signWebhook, type WhatsAppFake } from './fakes/whatsapp/index.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { CLARIFY_QUESTION, clarifyScript } from './helpers/clarify-script.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { readStoreFile } from './helpers/store-rows.js';
import { makePdf, serveBytes } from './helpers/files.js';
import { Gate } from './helpers/gate.js';
import { waitForWhatsApp, whatsappEnv, whatsappTexts } from './helpers/whatsapp.js';

const REPLY_TIMEOUT_MS = 20_000;
const HOLD = 'hold';
const PHOTO = png(24, 16, { rgb: [10, 200, 30] });

let wa: WhatsAppFake;
let llm: FakeLLM;
let cluster: Cluster;
let fileHost = '';
const gate = new Gate();
let userSeq = 0;

/** A fresh user per test: 1555 + a number of 7 digits. */
function newUser(): string {
  userSeq += 1;
  return `1555${String(Date.now() % 1_000_000).padStart(6, '0')}${userSeq}`.slice(0, 15);
}

async function respond(req: RecordedRequest): Promise<Step> {
  const text = lastUserText(req);
  if (text.startsWith(HOLD)) await gate.wait();
  if (text.startsWith('long')) return { text: `${'word '.repeat(1_900)}end` };
  if (text.startsWith('pic') && turnStep(req) === 0) {
    return { toolCalls: [{ name: 'send_file', arguments: JSON.stringify({ url: `${fileHost}/photo.png`, caption: 'the picture' }) }] };
  }
  if (text.startsWith('pic')) return { text: 'Here it is.' };
  if (text.startsWith('book')) return clarifyScript(req);
  const images = imagesOf(req);
  return { text: `ok: ${text}${images.length > 0 ? ` [${images.length} image]` : ''}` };
}

async function repliesFor(user: string, n: number, what: string): Promise<string[]> {
  return waitFor(() => (whatsappTexts(wa, user).length >= n ? whatsappTexts(wa, user) : undefined), { timeoutMs: REPLY_TIMEOUT_MS, what });
}

async function turnJobsEver(): Promise<number> {
  const queue = new Queue('turns', { connection: { url: 'redis://127.0.0.1:6379' }, prefix: cluster.prefix });
  try {
    return Object.values(await queue.getJobCounts()).reduce((a, b) => a + b, 0);
  } finally {
    await queue.close();
  }
}

beforeAll(async () => {
  wa = await startWhatsAppFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  const host = await serveBytes(PHOTO, 'image/png');
  fileHost = host.url;
  afterAll(() => host.close());
  const env = whatsappEnv(wa, llm, {
    HERALD_BUSY_INPUT_MODE: 'queue',
    HERALD_VISION_MODEL: 'openai:gpt-4.1-mini',
    HERALD_TYPING_DELAY_MS: '0',
    HERALD_FETCH_ALLOW_PRIVATE: 'true',
    HERALD_STT_MODEL: 'openai:gpt-4o-mini-transcribe',
    // clarify is in the full toolset.
    HERALD_TOOLSETS: 'full',
    HERALD_MEDIA_MAX_FILE_BYTES: '100000',
  });
  cluster = await startCluster({ workers: 0, env });
  await waitForWhatsApp(wa, cluster);
}, 60_000);

afterEach(() => gate.reset());

afterAll(async () => {
  gate.release();
  await cluster?.stop();
  await wa?.close();
  await llm?.close();
});

describe('WhatsApp webhook', () => {
  it('answers the verification handshake with the challenge, and refuses a wrong verify token', async () => {
    const base = `${cluster.ingress.url}/whatsapp/webhook`;
    const ok = await fetch(`${base}?hub.mode=subscribe&hub.verify_token=${wa.verifyToken}&hub.challenge=1158201444`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('1158201444');
    const wrong = await fetch(`${base}?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1158201444`);
    expect(wrong.status).toBe(403);
    expect(await wrong.text()).not.toContain('1158201444');
  });

  it('a forged signature is a 401 and nothing is queued; malformed JSON is a 400', async () => {
    const before = await turnJobsEver();
    const user = newUser();
    const payload = JSON.stringify(
      messagesPayload(wa, { messages: [{ from: user, id: 'wamid.FORGED1', timestamp: '1', type: 'text', text: { body: 'forged' } }] }),
    );
    expect((await wa.postRaw(payload, signWebhook('not-the-secret', payload))).status).toBe(401);
    expect((await wa.postRaw(payload, null)).status).toBe(401);
    expect((await wa.postRaw('{"object": "whatsapp_business_account", "entry": [')).status).toBe(400);
    expect((await wa.postRaw('[1, 2]')).status).toBe(400);
    // A real message after them goes through, so the refused ones had their chance to be queued.
    const ok = await wa.text('after the forgeries', { from: user });
    expect(ok.status).toBe(200);
    await repliesFor(user, 1, 'the reply after the forgeries');
    expect(whatsappTexts(wa, user)).toEqual(['ok: after the forgeries']);
    expect((await turnJobsEver()) - before).toBe(1);
    expect(cluster.ingress.logs().some((l) => l.msg === 'whatsapp webhook call with a wrong or missing X-Hub-Signature-256')).toBe(true);
  });
});

describe('WhatsApp messages', () => {
  it('a text gets one reply, with a read receipt and typing on it, stored with source whatsapp', async () => {
    const user = newUser();
    const sent = await wa.text('hello', { from: user, name: 'Alice' });
    expect(sent.status).toBe(200);
    expect(await repliesFor(user, 1, 'the reply to hello')).toEqual(['ok: hello']);
    expect(wa.reads.some((r) => r.messageId === sent.id && r.typing)).toBe(true);
    const rows = readStoreFile(cluster.dbPath, (db) => db.prepare(`SELECT key, source, user_id, user_name FROM sessions WHERE user_id = ?`).all(user));
    expect(rows).toEqual([{ key: `agent:main:whatsapp:dm:${user}`, source: 'whatsapp', user_id: user, user_name: 'Alice' }]);
  });

  it("Meta's redelivery of the same message is answered once", async () => {
    const user = newUser();
    const first = await wa.text('only once please', { from: user, id: 'wamid.REDELIVER1' });
    const again = await wa.text('only once please', { from: user, id: 'wamid.REDELIVER1' });
    expect([first.status, again.status]).toEqual([200, 200]);
    await repliesFor(user, 1, 'the reply');
    await wa.text('next one', { from: user });
    await repliesFor(user, 2, 'the second reply');
    expect(whatsappTexts(wa, user)).toEqual(['ok: only once please', 'ok: next one']);
  });

  it('a long reply is split into messages of at most 4,096 characters, nothing lost', async () => {
    const user = newUser();
    await wa.text('long please', { from: user });
    const parts = await waitFor(
      () => {
        const t = whatsappTexts(wa, user);
        return t.length > 0 && /end \(\d+\/\d+\)$/.test(t.at(-1) ?? '') ? t : undefined;
      },
      { timeoutMs: REPLY_TIMEOUT_MS, what: 'the whole long reply' },
    );
    expect(parts.length).toBeGreaterThan(1);
    for (const p of parts) expect(p.length).toBeLessThanOrEqual(4_096);
    expect(
      parts
        .join(' ')
        .split(/\s+/)
        .filter((w) => w === 'word'),
    ).toHaveLength(1_900);
  });

  it('commands: /help answers without the model, /new starts a new session', async () => {
    const user = newUser();
    await wa.text('hi before new', { from: user });
    await repliesFor(user, 1, 'the first reply');
    await wa.text('/help', { from: user });
    const help = await repliesFor(user, 2, 'the help');
    expect(help[1]).toMatch(/\/new/);
    await wa.text('/new', { from: user });
    await repliesFor(user, 3, 'the /new answer');
    expect(llm.requests.some((r) => ['/help', '/new'].includes(lastUserText(r)))).toBe(false);
    await wa.text('after new', { from: user });
    await repliesFor(user, 4, 'the reply after /new');
    const sessions = readStoreFile(cluster.dbPath, (db) => db.prepare(`SELECT id FROM sessions WHERE user_id = ?`).all(user));
    expect(sessions).toHaveLength(2);
  });

  it('busy (queue mode): a message sent while a turn runs is answered after it, in order', async () => {
    const user = newUser();
    await wa.text('hold first', { from: user });
    await waitFor(() => llm.requests.some((r) => lastUserText(r) === 'hold first'), { timeoutMs: REPLY_TIMEOUT_MS, what: 'the held turn' });
    await wa.text('second', { from: user });
    gate.release();
    const replies = await repliesFor(user, 3, 'the acknowledgement and both replies');
    expect(replies[0]).toMatch(/Queued/);
    expect(replies.slice(1)).toEqual(['ok: hold first', 'ok: second']);
  });

  it('a reply to one of the bot messages carries the context; a photo reaches the model as an image', async () => {
    const user = newUser();
    await wa.text('first', { from: user });
    await repliesFor(user, 1, 'the first reply');
    const botMessage = wa.sentTo(user)[0].id;
    const mediaId = wa.hostMedia(PHOTO, 'image/png');
    await wa.message(
      { type: 'image', image: { id: mediaId, mime_type: 'image/png', sha256: 'x', caption: 'what is this' } },
      { from: user, replyTo: botMessage },
    );
    const replies = await repliesFor(user, 2, 'the reply to the photo');
    expect(replies[1]).toMatch(/^ok: what is this[\s\S]*\[1 image\]$/);
  });

  it('a voice note (OGG/Opus) is fetched through the Graph media URL and reaches the model as its transcript', async () => {
    const user = newUser();
    const words = 'remind me to water the plants';
    const mediaId = wa.hostMedia(Buffer.from(`OggS ${words}`), 'audio/ogg; codecs=opus');
    await wa.message({ type: 'audio', audio: { id: mediaId, mime_type: 'audio/ogg; codecs=opus', sha256: 'x', voice: true } }, { from: user });
    const [reply] = await repliesFor(user, 1, 'the reply to the voice note');
    expect(reply).toContain(`transcribed: ${words}`);
  });

  it('a PDF document reaches the model as its text; an oversized one is named with the limit and never downloaded', async () => {
    const user = newUser();
    const pdfId = wa.hostMedia(makePdf(['Invoice whatsapp 4711', 'Total due: 99 EUR']), 'application/pdf');
    await wa.message(
      { type: 'document', document: { id: pdfId, filename: 'invoice.pdf', mime_type: 'application/pdf', caption: 'sum it up' } },
      { from: user },
    );
    await repliesFor(user, 1, 'the answer to the PDF');
    const seen = lastUserText(llm.requests.find((r) => lastUserText(r).includes('sum it up'))!);
    expect(seen).toContain('[Document "invoice.pdf", 2 pages]');
    expect(seen).toContain('Total due: 99 EUR');
    const bigId = wa.hostMedia(Buffer.alloc(150_000, 'x'), 'text/plain');
    await wa.message({ type: 'document', document: { id: bigId, filename: 'huge.log', mime_type: 'text/plain', caption: 'and the log' } }, { from: user });
    const replies = await repliesFor(user, 3, 'the notice and the answer');
    expect(replies[1]).toBe('⚠️ huge.log: too large (150 KB; the limit is 100 KB).');
    expect(replies[2]).toContain('and the log');
    expect(wa.downloads).not.toContain(bigId);
  });

  it('a clarify question comes as reply buttons; pressing one answers it', async () => {
    const user = newUser();
    await wa.text('book a table', { from: user });
    const question = await waitFor(() => wa.sentTo(user).find((s) => s.type === 'interactive'), { timeoutMs: REPLY_TIMEOUT_MS, what: 'the buttons' });
    expect(question.text).toContain(CLARIFY_QUESTION);
    const buttons = (question.body.interactive as { action: { buttons: { reply: { id: string; title: string } }[] } }).action.buttons.map((b) => b.reply);
    expect(buttons.map((b) => b.title)).toEqual(['2', '4']);
    const four = buttons.find((b) => b.title === '4')!;
    await wa.message({ type: 'interactive', interactive: { type: 'button_reply', button_reply: four } }, { from: user, replyTo: question.id });
    const answer = await waitFor(() => whatsappTexts(wa, user).find((t) => t.startsWith('Booked.')), { timeoutMs: REPLY_TIMEOUT_MS, what: 'the booking' });
    expect(answer).toContain('4');
  });

  it('a file the agent sends goes up through the media upload and out as an image message', async () => {
    const user = newUser();
    await wa.text('pic please', { from: user });
    await waitFor(() => wa.sentTo(user).some((s) => s.type === 'image'), { timeoutMs: REPLY_TIMEOUT_MS, what: 'the image message' });
    const image = wa.sentTo(user).find((s) => s.type === 'image')!;
    const upload = wa.uploads.get(String((image.body.image as { id: string }).id))!;
    expect(upload.bytes.equals(PHOTO)).toBe(true);
    expect(image.text).toBe('the picture');
  });

  it('a pair rate limit (131056) on the reply is waited out and the reply still arrives once', async () => {
    const user = newUser();
    wa.failNext({ status: 400, code: 131056, message: '(#131056) (Business Account, Consumer Account) pair rate limit hit' });
    await wa.text('rate limited', { from: user });
    expect(await repliesFor(user, 1, 'the reply after the rate limit')).toEqual(['ok: rate limited']);
  });

  it('outside the 24-hour window the reply is refused and logged, not sent', async () => {
    const user = newUser();
    await wa.text('from yesterday', { from: user, timestamp: Math.floor(Date.now() / 1000) - 25 * 3600 });
    await cluster.ingress.waitForLog((l) => String(l.msg).includes('24-hour window is closed'), 'the window refusal');
    expect(wa.sentTo(user).filter((s) => s.type === 'text')).toEqual([]);
  });

  it('/health/detailed lists WhatsApp as connected, with its last webhook', async () => {
    const res = await fetch(`${cluster.ingress.url}/health/detailed`);
    const body = (await res.json()) as { platforms: Record<string, { state: string; last_event_at: string | null }> };
    expect(body.platforms.whatsapp.state).toBe('connected');
    expect(Date.parse(body.platforms.whatsapp.last_event_at ?? '')).toBeGreaterThan(Date.now() - 10 * 60_000);
    expect(body.platforms.discord.state).toBe('disabled');
  });

  it('never writes the access token or the app secret to its logs', () => {
    const all = cluster.ingress.output.join('\n');
    expect(all).not.toContain(wa.accessToken);
    expect(all).not.toContain(wa.appSecret);
    expect(all).not.toContain(wa.verifyToken);
  });
});
