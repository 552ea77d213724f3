/**
 * WhatsApp and the turn's life through the real gateway (issue 51): the busy modes (interrupt: the running answer is
 * dropped and both texts answered as one; steer: the new text joins the running turn after its tool batch), status
 * reactions on the user's message, the webhook's bad input (another object, messages lacking fields, statuses, an
 * oversized body: acknowledged or refused with a 4xx as Meta expects, nothing valid beside them lost, no crash), and
 * a SIGKILL of the gateway with a turn in flight: after the restart the message is answered, once. One `all` process
 * (its own SQLite file and Redis prefix, so it can be restarted); the users are routed to profiles by busy mode.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { messagesPayload, startWhatsAppFake, type WhatsAppFake } from './fakes/whatsapp/index.js';
import { oversizeStatus } from './fuzz/harness.js';
import type { GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { deleteRedisPrefix } from './helpers/redis-keys.js';
import { testPrefix } from './helpers/test-run.js';
import { startWhatsAppGateway, whatsappTexts } from './helpers/whatsapp.js';

const WAIT = { timeoutMs: 30_000 };
const INTERRUPTER = '15558880001';
const STEERER = '15558880002';
const BAD_INPUT_USER = '15558880003';
const CRASH_USER = '15558880004';
const REACTOR = '15558880005';
const CLOCK = 'check the clock';
/** Held until the test lets it go (never, for the first run of CRASH_TEXT). */
const CRASH_TEXT = 'crash under me';
const ESSAY = 'write a long essay';
const TIME_QUESTION = 'what time is it?';

let wa: WhatsAppFake;
let llm: FakeLLM;
let gw: GatewayProcess;
let dir = '';
const prefix = testPrefix('wa-turns');
let letTimeQuestionGo: () => void = () => undefined;
const timeQuestionHeld = new Promise<void>((resolve) => (letTimeQuestionGo = resolve));
let crashRuns = 0;

function hasToolResult(req: RecordedRequest): boolean {
  return ((req.body.messages ?? []) as Array<{ role: string }>).some((m) => m.role === 'tool');
}

async function respond(req: RecordedRequest): Promise<Step> {
  const text = lastUserText(req);
  // Answered only if the turn is not interrupted first; the interrupting message aborts this request.
  if (text === ESSAY) return { text: 'stale answer', delayMs: 3_600_000 };
  if (text === TIME_QUESTION) {
    await timeQuestionHeld;
    return { toolCalls: [{ name: 'current_time', arguments: '{}' }] };
  }
  if (text === 'in UTC please' && hasToolResult(req)) return { text: 'It is time, in UTC as you asked.' };
  if (text === CLOCK) return hasToolResult(req) ? { text: 'The clock is checked.' } : { toolCalls: [{ name: 'current_time', arguments: '{}' }] };
  // The killed process's call never ends on its own; the run after the restart is answered.
  if (text === CRASH_TEXT && ++crashRuns === 1) return { text: 'never sent', delayMs: 3_600_000 };
  return { text: `ok: ${text}` };
}

function start(): Promise<GatewayProcess> {
  return startWhatsAppGateway(wa, llm, {
    dir,
    prefix,
    env: {
      HERALD_TOOLSETS: 'core',
      HERALD_TYPING_DELAY_MS: '0',
      HERALD_BUSY_INPUT_MODE: 'queue',
      WHATSAPP_STATUS_REACTIONS: 'on',
      HERALD_PROFILES: JSON.stringify({ interrupter: { busy_input_mode: 'interrupt' }, steerer: { busy_input_mode: 'steer' } }),
      HERALD_ROUTES: JSON.stringify([
        { platform: 'whatsapp', user: INTERRUPTER, profile: 'interrupter' },
        { platform: 'whatsapp', user: STEERER, profile: 'steerer' },
      ]),
    },
  });
}

async function repliesFor(user: string, n: number, what: string): Promise<string[]> {
  return waitFor(() => (whatsappTexts(wa, user).length >= n ? whatsappTexts(wa, user) : undefined), { ...WAIT, what });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herald-wa-turns-'));
  wa = await startWhatsAppFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  gw = await start();
}, 120_000);

afterAll(async () => {
  letTimeQuestionGo();
  await gw?.stop();
  await deleteRedisPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
  await wa?.close();
  await llm?.close();
});

describe('WhatsApp busy modes', () => {
  it('interrupt: a new message aborts the running answer; both texts are answered once, no stale reply', async () => {
    await wa.text(ESSAY, { from: INTERRUPTER });
    const essay = await waitFor(() => llm.requests.find((r) => lastUserText(r) === ESSAY), { ...WAIT, what: 'the first LLM request' });
    await wa.text('never mind, say hi', { from: INTERRUPTER });
    expect(await repliesFor(INTERRUPTER, 1, 'the answer to both')).toEqual([`ok: ${ESSAY}\n\nnever mind, say hi`]);
    await wa.text('thanks', { from: INTERRUPTER });
    expect(await repliesFor(INTERRUPTER, 2, 'the next answer')).toEqual([`ok: ${ESSAY}\n\nnever mind, say hi`, 'ok: thanks']);
    expect(essay.aborted).toBe(true);
  });

  it('steer: a message sent while the turn runs joins it after its tool batch and is not run as a turn of its own', async () => {
    await wa.text(TIME_QUESTION, { from: STEERER });
    await waitFor(() => llm.requests.some((r) => lastUserText(r) === TIME_QUESTION), { ...WAIT, what: 'the held LLM request' });
    // The webhook answers 200 only once the message is handed over: it is in the running turn's mailbox now.
    expect((await wa.text('in UTC please', { from: STEERER })).status).toBe(200);
    letTimeQuestionGo();
    expect(await repliesFor(STEERER, 1, 'the steered answer')).toEqual(['It is time, in UTC as you asked.']);
    await wa.text('thanks', { from: STEERER });
    expect(await repliesFor(STEERER, 2, 'the next answer')).toEqual(['It is time, in UTC as you asked.', 'ok: thanks']);
    const steered = llm.requests.filter((r) => lastUserText(r) === 'in UTC please');
    expect(steered).toHaveLength(1);
    expect(hasToolResult(steered[0])).toBe(true);
  });
});

describe('WhatsApp status reactions (WHATSAPP_STATUS_REACTIONS=on)', () => {
  it("👀 when the turn starts, ⚙️ while tools run, then ✅ on the user's message", async () => {
    const asked = await wa.text(CLOCK, { from: REACTOR });
    const reactions = (): string[] =>
      wa
        .sentTo(REACTOR)
        .filter((s) => s.type === 'reaction' && (s.body.reaction as { message_id: string }).message_id === asked.id)
        .map((s) => (s.body.reaction as { emoji: string }).emoji || '-');
    await waitFor(() => reactions().at(-1) === '✅', { ...WAIT, what: 'the done reaction' });
    // WhatsApp keeps one reaction per message and sender: each stage replaces the last; removals send an empty one.
    expect(reactions()).toEqual(['👀', '⚙️', '-', '-', '✅']);
    expect(whatsappTexts(wa, REACTOR)).toEqual(['The clock is checked.']);
  });
});

describe('WhatsApp webhook bad input', () => {
  const num = (): { phoneNumberId: string; displayPhone: string } => ({ phoneNumberId: wa.phoneNumberId, displayPhone: wa.displayPhone });
  const msg = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    from: BAD_INPUT_USER,
    id,
    timestamp: String(Math.floor(Date.now() / 1000)),
    type: 'text',
    text: { body: `text of ${id}` },
    ...extra,
  });

  it('another object, messages lacking what Herald needs, and statuses are acknowledged and ignored; the valid message beside them is answered', async () => {
    wa.openWindow(BAD_INPUT_USER);
    const asked = llm.requests.length;
    const otherObject = { ...messagesPayload(num(), { messages: [msg('wamid.BADOBJECT1')] }), object: 'instagram' };
    expect((await wa.post(otherObject)).status).toBe(200);
    const { from: _from, ...noFrom } = msg('wamid.NOFROM1');
    const { id: _id, ...noId } = msg('wamid.NOID1');
    const { type: _type, ...noType } = msg('wamid.NOTYPE1');
    const lacking = [noFrom, noId, noType, msg('wamid.NOBODY1', { text: {} }), msg('wamid.BADFROM1', { from: '+1 (555) 888' })];
    const batch = messagesPayload(num(), {
      messages: [...lacking, msg('wamid.GOOD1', { text: { body: 'the valid one' } })],
      statuses: [{ id: 'wamid.OUT1', status: 'delivered', timestamp: '1', recipient_id: BAD_INPUT_USER }],
    });
    expect((await wa.post(batch)).status).toBe(200);
    const noMetadata = messagesPayload(num(), { messages: [msg('wamid.NOMETA1')] });
    delete ((noMetadata.entry as Array<{ changes: Array<{ value: Record<string, unknown> }> }>)[0].changes[0].value as { metadata?: unknown }).metadata;
    expect((await wa.post(noMetadata)).status).toBe(200);
    expect((await wa.post({ object: 'whatsapp_business_account' })).status).toBe(400);
    expect((await wa.post({ object: 'whatsapp_business_account', entry: 'not a list' })).status).toBe(400);
    expect(await repliesFor(BAD_INPUT_USER, 1, 'the answer to the valid message')).toEqual(['ok: the valid one']);
    await wa.text('and one more', { from: BAD_INPUT_USER });
    expect(await repliesFor(BAD_INPUT_USER, 2, 'the next answer')).toEqual(['ok: the valid one', 'ok: and one more']);
    expect(llm.requests.slice(asked).map(lastUserText)).toEqual(['the valid one', 'and one more']);
  });

  it('a body over the limit is refused with 413 before it is read, and the gateway goes on answering', async () => {
    const huge = JSON.stringify(messagesPayload(num(), { messages: [msg('wamid.HUGE1', { text: { body: 'x'.repeat(2 * 1024 * 1024) } })] }));
    const status = await oversizeStatus(`${gw.url}/whatsapp/webhook`, { body: huge, contentType: 'application/json' }, {});
    expect(status).toBe(413);
    await wa.text('still there?', { from: BAD_INPUT_USER });
    expect((await repliesFor(BAD_INPUT_USER, 3, 'the answer after the huge body')).at(-1)).toBe('ok: still there?');
    expect(gw.proc.exitCode).toBeNull();
  });
});

describe('WhatsApp restart with a turn in flight', () => {
  it('SIGKILL while the model answers, then a restart: the message is answered once', async () => {
    await wa.text(CRASH_TEXT, { from: CRASH_USER });
    await waitFor(() => crashRuns === 1, { ...WAIT, what: 'the LLM request of the turn' });
    await gw.stop('SIGKILL');
    gw = await start();
    expect(await repliesFor(CRASH_USER, 1, 'the answer after the restart')).toEqual([`ok: ${CRASH_TEXT}`]);
    await wa.text('after the crash', { from: CRASH_USER });
    expect(await repliesFor(CRASH_USER, 2, 'the next answer')).toEqual([`ok: ${CRASH_TEXT}`, 'ok: after the crash']);
    expect(crashRuns).toBe(2);
    expect(gw.output.join('\n')).not.toContain(wa.accessToken);
  });
});
