/**
 * WhatsApp outbound through the real gateway (issue 51): voice replies as OGG/Opus audio messages uploaded through
 * the media endpoint, the configured template outside the 24-hour window, approvals as reply buttons, a clarify
 * with four choices (one more than reply buttons hold) as a list message, and Graph's throughput limit (130429) and
 * 5xx answers waited out without losing or repeating the reply. One `all` process against the WhatsApp, OpenAI and
 * MCP stand-ins; each test has its own user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STALE_PRESS_NOTE } from '../apps/gateway/src/features/interactions/buttons.js';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { stdioServer } from './fakes/mcp/index.js';
import { readOgg } from './fakes/media/ogg.js';
import { startWhatsAppFake, type SentRecord, type WhatsAppFake } from './fakes/whatsapp/index.js';
import { ARG_SECRET, DESTRUCTIVE_TOOL, approvalScript, auditedDecisions } from './helpers/approval-script.js';
import { startCluster, type Cluster } from './helpers/cluster.js';
import { Gate } from './helpers/gate.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { waitForWhatsApp, whatsappEnv, whatsappTexts } from './helpers/whatsapp.js';

const WAIT = { timeoutMs: 30_000 };
const ADMIN_TOKEN = 'wa-approvals-admin-token-0123456789';
const TEMPLATE = { name: 'herald_follow_up', language: 'en_US' };
/** Four: the most clarify offers (MAX_CLARIFY_CHOICES), one more than WhatsApp's reply buttons hold. */
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday'];

let wa: WhatsAppFake;
let llm: FakeLLM;
let cluster: Cluster;
let userSeq = 0;
/** "hold …" answers wait here, so a test can change what Graph knows while the turn runs. */
const gate = new Gate();

function newUser(): string {
  userSeq += 1;
  return `1556${String(Date.now() % 1_000_000).padStart(6, '0')}${userSeq}`.slice(0, 15);
}

/** This turn's tool result, if the tool ran already. */
function toolResult(req: RecordedRequest): string | undefined {
  const messages = (req.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const afterUser = messages.slice(messages.map((m) => m.role).lastIndexOf('user') + 1);
  const result = afterUser.find((m) => m.role === 'tool')?.content;
  return typeof result === 'string' ? result : undefined;
}

/** "delete <n>": the approval script; "which day": a clarify with four choices; "hold": echoed at the gate; anything else echoed. */
async function respond(req: RecordedRequest): Promise<Step> {
  const text = lastUserText(req);
  if (text.startsWith('hold')) await gate.wait();
  if (text.startsWith('delete')) return approvalScript(req);
  if (text.startsWith('which day')) {
    const result = toolResult(req);
    if (result === undefined) return { toolCalls: [{ name: 'clarify', arguments: JSON.stringify({ question: 'Which day suits you?', choices: DAYS }) }] };
    return { text: `Noted. (${result})` };
  }
  return { text: `ok: ${text}` };
}

function interactiveOf(s: SentRecord): { type: string; action: Record<string, unknown> } {
  return s.body.interactive as { type: string; action: Record<string, unknown> };
}

async function replyTo(user: string, predicate: (texts: string[]) => boolean, what: string): Promise<string[]> {
  return waitFor(() => (predicate(whatsappTexts(wa, user)) ? whatsappTexts(wa, user) : undefined), { ...WAIT, what });
}

beforeAll(async () => {
  wa = await startWhatsAppFake();
  llm = await startFakeOpenAI();
  llm.respondWith(respond);
  const env = whatsappEnv(wa, llm, {
    HERALD_TYPING_DELAY_MS: '0',
    HERALD_TOOLSETS: 'full',
    HERALD_TTS_MODEL: 'openai:gpt-4o-mini-tts',
    HERALD_TTS_VOICE: 'nova',
    WHATSAPP_WINDOW_TEMPLATE: `${TEMPLATE.name}:${TEMPLATE.language}`,
    HERALD_MCP_SERVERS: JSON.stringify({ local: stdioServer('local') }),
    HERALD_ADMIN_TOKEN: ADMIN_TOKEN,
    HERALD_APPROVAL_TIMEOUT_S: '600',
  });
  cluster = await startCluster({ workers: 0, env });
  await cluster.ingress.waitForLog((l) => String(l.msg).startsWith('mcp server local ready'), 'the MCP server');
  await waitForWhatsApp(wa, cluster);
}, 120_000);

afterAll(async () => {
  gate.release();
  await cluster?.stop();
  await wa?.close();
  await llm?.close();
});

describe('WhatsApp outbound', () => {
  it('/voice on: the answer also comes as an OGG/Opus audio message, uploaded through the media endpoint', async () => {
    const user = newUser();
    await wa.text('/voice on', { from: user });
    const [on] = await replyTo(user, (t) => t.length >= 1, 'the /voice answer');
    expect(on).toMatch(/^🔊 Voice replies on: each answer also comes as a voice note/);
    await wa.text('tell me a short story', { from: user });
    await replyTo(user, (t) => t.includes('ok: tell me a short story'), 'the text answer');
    const audio = await waitFor(() => wa.sentTo(user).find((s) => s.type === 'audio'), { ...WAIT, what: 'the audio message' });
    const upload = wa.uploads.get(String((audio.body.audio as { id: string }).id));
    expect(upload?.mimeType).toBe('audio/ogg');
    expect(readOgg(upload?.bytes ?? Buffer.alloc(0))).toMatchObject({ opus: true, crcOk: true });
    expect(audio.body.audio).not.toHaveProperty('caption');
    expect(llm.speech?.requests().at(-1)?.body).toMatchObject({ input: 'ok: tell me a short story', response_format: 'opus', voice: 'nova' });
  });

  it('outside the 24-hour window the configured template goes instead of the reply, with its name and language', async () => {
    const user = newUser();
    await wa.text('from two days ago', { from: user, timestamp: Math.floor(Date.now() / 1000) - 48 * 3600 });
    const template = await waitFor(() => wa.sentTo(user).find((s) => s.type === 'template'), { ...WAIT, what: 'the template message' });
    expect(template.body.template).toEqual({ name: TEMPLATE.name, language: { code: TEMPLATE.language } });
    await cluster.ingress.waitForLog((l) => String(l.msg).includes('sending the template instead of the reply'), 'the log line');
    expect(wa.sentTo(user).map((s) => s.type)).toEqual(['template']);
    // The user writes again: the window is open, and the next answer is free-form.
    await wa.text('and now', { from: user });
    expect(await replyTo(user, (t) => t.length >= 1, 'the free-form reply')).toEqual(['ok: and now']);
  });

  it("Graph's 131047 on a reply Herald thought inside the window (it closed while the turn ran): the template goes instead, once", async () => {
    const user = newUser();
    await wa.text('hold while the window closes', { from: user });
    await waitFor(() => llm.requests.some((r) => lastUserText(r) === 'hold while the window closes') || undefined, { ...WAIT, what: 'the turn running' });
    // Graph's own record of the user's last message: now more than 24 hours old. Herald's still says minutes.
    wa.openWindow(user, Date.now() - 25 * 3600_000);
    gate.release();
    const template = await waitFor(() => wa.sentTo(user).find((s) => s.type === 'template'), { ...WAIT, what: 'the template message' });
    expect(template.body.template).toEqual({ name: TEMPLATE.name, language: { code: TEMPLATE.language } });
    await cluster.ingress.waitForLog(
      (l) => String(l.msg).includes('sending the template instead of the reply') && l.why === 'closed (Graph 131047)',
      'the log line',
    );
    expect(wa.sentTo(user).map((s) => s.type)).toEqual(['template']);
    gate.reset();
  });

  /** Asks for ticket `n` and waits for the approval question; returns its buttons (id and title). */
  async function approvalQuestion(user: string, n: number): Promise<{ id: string; buttons: Array<{ id: string; title: string }> }> {
    await wa.text(`delete ${n}`, { from: user });
    const question = await waitFor(() => wa.sentTo(user).find((s) => s.type === 'interactive'), { ...WAIT, what: 'the approval question' });
    expect(question.text).toContain(DESTRUCTIVE_TOOL);
    expect(question.text).not.toContain(ARG_SECRET);
    const interactive = interactiveOf(question);
    expect(interactive.type).toBe('button');
    const buttons = (interactive.action.buttons as Array<{ reply: { id: string; title: string } }>).map((b) => b.reply);
    expect(buttons.map((b) => b.title)).toEqual(['✅ Approve once', '♾️ Always in this c…', '⛔ Deny']);
    expect(whatsappTexts(wa, user).some((t) => t.startsWith('results:'))).toBe(false);
    return { id: question.id, buttons };
  }

  async function press(user: string, questionId: string, button: { id: string; title: string }): Promise<void> {
    await wa.message({ type: 'interactive', interactive: { type: 'button_reply', button_reply: button } }, { from: user, replyTo: questionId });
  }

  async function decisionFor(n: number): Promise<Record<string, string>> {
    const found = await waitFor(async () => (await auditedDecisions(cluster.ingress.url, ADMIN_TOKEN)).find((d) => d.args.includes(`"id":${n}`)), {
      ...WAIT,
      what: `the audit record of ticket ${n}`,
    });
    return found as unknown as Record<string, string>;
  }

  it('an approval comes as reply buttons; pressing "Approve once" runs the tool, audited', async () => {
    const user = newUser();
    const question = await approvalQuestion(user, 51);
    await press(user, question.id, question.buttons[0]);
    const texts = await replyTo(user, (t) => t.some((x) => x.startsWith('results:')), 'the result');
    expect(texts.find((x) => x.startsWith('results:'))).toBe('results: local deleted ticket 51');
    expect(await decisionFor(51)).toMatchObject({ platform: 'whatsapp', decision: 'approved_once', decided_by: `whatsapp:${user}` });
  });

  it('pressing "Deny" refuses the tool, audited; pressing again later is answered as no longer active', async () => {
    const user = newUser();
    const question = await approvalQuestion(user, 52);
    await press(user, question.id, question.buttons[2]);
    const texts = await replyTo(user, (t) => t.some((x) => x.startsWith('results:')), 'the result');
    expect(texts.find((x) => x.startsWith('results:'))).toBe(
      `results: Not run: the user denied ${DESTRUCTIVE_TOOL}. Do not try it again unless they ask for it.`,
    );
    expect(await decisionFor(52)).toMatchObject({ platform: 'whatsapp', decision: 'denied', decided_by: `whatsapp:${user}` });
    await press(user, question.id, question.buttons[0]);
    await replyTo(user, (t) => t.includes(STALE_PRESS_NOTE), 'the note on the late press');
    await wa.text('done?', { from: user });
    await replyTo(user, (t) => t.includes('ok: done?'), 'the next answer');
    expect(await decisionFor(52)).toMatchObject({ decision: 'denied' });
    expect(llm.requests.filter((r) => lastUserText(r) === 'delete 52')).toHaveLength(2);
  });

  it('a clarify with four choices (reply buttons hold three) comes as a list message; picking a row answers it', async () => {
    const user = newUser();
    await wa.text('which day works?', { from: user });
    const question = await waitFor(() => wa.sentTo(user).find((s) => s.type === 'interactive'), { ...WAIT, what: 'the list message' });
    expect(question.text).toContain('Which day suits you?');
    const list = interactiveOf(question);
    expect(list.type).toBe('list');
    const rows = (list.action.sections as Array<{ rows: Array<{ id: string; title: string }> }>)[0].rows;
    expect(rows.map((r) => r.title)).toEqual(DAYS);
    const thursday = rows[3];
    await wa.message({ type: 'interactive', interactive: { type: 'list_reply', list_reply: thursday } }, { from: user, replyTo: question.id });
    const texts = await replyTo(user, (t) => t.some((x) => x.startsWith('Noted.')), 'the answer');
    expect(texts.find((x) => x.startsWith('Noted.'))).toContain('Thursday');
  });

  it("Graph's throughput limit (130429) on the reply is waited out: the reply arrives once", async () => {
    const user = newUser();
    wa.failNext({ status: 400, code: 130429, message: '(#130429) Rate limit hit', messageType: 'text' });
    await wa.text('busy number', { from: user });
    await replyTo(user, (t) => t.length >= 1, 'the reply after the throughput limit');
    expect(wa.failed.some((f) => f.code === 130429)).toBe(true);
    await wa.text('and after', { from: user });
    expect(await replyTo(user, (t) => t.length >= 2, 'the next reply')).toEqual(['ok: busy number', 'ok: and after']);
  });

  it('a 5xx from Graph on the reply, and on the voice upload, is retried: each arrives once', async () => {
    const user = newUser();
    await wa.text('/voice on', { from: user });
    await replyTo(user, (t) => t.length >= 1, 'the /voice answer');
    wa.failNext(
      { status: 500, code: 1, message: 'An unknown error occurred', messageType: 'text' },
      { status: 503, code: 2, message: 'Service temporarily unavailable', path: '/media' },
    );
    await wa.text('flaky graph', { from: user });
    await waitFor(() => wa.sentTo(user).some((s) => s.type === 'audio'), { ...WAIT, what: 'the voice reply after the 503' });
    expect(wa.failed.map((f) => f.code)).toEqual(expect.arrayContaining([1, 2]));
    await wa.text('/voice off', { from: user });
    await wa.text('steady now', { from: user });
    await replyTo(user, (t) => t.includes('ok: steady now'), 'the last reply');
    expect(whatsappTexts(wa, user).filter((t) => t.startsWith('ok:'))).toEqual(['ok: flaky graph', 'ok: steady now']);
    expect(wa.sentTo(user).filter((s) => s.type === 'audio')).toHaveLength(1);
  });

  it('never writes the access token or the app secret to its logs', () => {
    const all = cluster.ingress.output.join('\n');
    for (const secret of [wa.accessToken, wa.appSecret, wa.verifyToken, ARG_SECRET]) expect(all).not.toContain(secret);
  });
});
