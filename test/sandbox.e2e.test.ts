/**
 * Issue 50, execute_code end to end: the real gateway process (default toolsets, so `code` is on), the Telegram
 * stand-in for the user, the OpenAI stand-in scripted to call execute_code, and the bubblewrap sandbox of this
 * host (CI installs it: .ci/run). Python that writes a PNG in its work dir → the user gets it as a photo
 * (sendPhoto), after the user approved the run with the question's button (code execution needs approval by
 * default: docs/approvals.md); a file the user sent is readable by the code in inputs/ (that profile exempts the tool
 * from approval); /health/detailed names the backend.
 * A second gateway whose only backend cannot be used (Docker, pointed at a socket nobody serves) does not offer
 * the tool and says why in one start-up line, and /health/detailed says it too.
 *
 * The stand-in answers by the tag that starts the user's text (`png …`, `read …`); step 0 of a turn calls the
 * tool, step 1 answers with text.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM, type RecordedRequest, type Step } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { lastUserText, turnStep } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';

/** A 40×30 RGB PNG from the standard library alone: signature, IHDR, one zlib IDAT, IEND, each with its CRC. */
const WRITE_PNG = `
import struct, zlib
w, h = 40, 30
raw = b''.join(b'\\x00' + bytes([200, 80, 40]) * w for _ in range(h))
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)
png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')
open('chart.png', 'wb').write(png)
print('wrote chart.png', len(png))
`;

/** Reads the user's CSV from inputs/ and prints it changed (upper case), so the tool's result cannot be the file's text the media step put in the message. */
const READ_INPUT = `
import os
print(sorted(os.listdir('inputs')))
print(open('inputs/sales.csv').read().upper())
`;

interface WireMessage {
  role: string;
  content: string | null;
}

const messagesOf = (req: RecordedRequest): WireMessage[] => (req.body.messages ?? []) as WireMessage[];
const toolNamesOf = (req: RecordedRequest): string[] => ((req.body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
const toolResults = (req: RecordedRequest): string[] =>
  messagesOf(req)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content ?? '');
const executeCode = (language: string, code: string): Step => ({ toolCalls: [{ name: 'execute_code', arguments: JSON.stringify({ language, code }) }] });

function respond(req: RecordedRequest): Step {
  const text = lastUserText(req);
  const tag = text.split(/\s+/)[0];
  const first = turnStep(req) === 0;
  if (tag === 'png') return first ? executeCode('python', WRITE_PNG) : { text: 'Here is your chart.' };
  if (tag === 'read') return first ? executeCode('python', READ_INPUT) : { text: 'I read your file.' };
  return { text: `re: ${text}` };
}

async function health(gw: GatewayProcess): Promise<{ sandbox: { backend: string | null; unavailable: string[] } | null }> {
  const res = await fetch(`${gw.url}/health/detailed`);
  expect(res.status).toBe(200);
  return (await res.json()) as { sandbox: { backend: string | null; unavailable: string[] } | null };
}

function pngSize(data: Buffer): { width: number; height: number } {
  expect(data.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(data.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

describe('execute_code in the bubblewrap sandbox', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  let sandboxDir: string;

  beforeAll(async () => {
    // The sandbox's own uid must pass through every folder above the work dirs (a mkdtemp folder is 0700).
    sandboxDir = await mkdtemp(join(tmpdir(), 'herald-sandbox-e2e-'));
    await chmod(sandboxDir, 0o711);
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    llm.respondWith(respond);
    gw = await startGateway({
      env: telegramEnv(tg, llm, {
        HERALD_SANDBOX_DIR: join(sandboxDir, 'sandbox'),
        // The second chat's profile runs code without asking (approval_exempt); the first asks, as by default.
        HERALD_PROFILES: JSON.stringify({ trusted: { approval_exempt: ['execute_code'] } }),
        HERALD_ROUTES: JSON.stringify([{ chat: '50002', profile: 'trusted' }]),
      }),
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await tg?.close();
    await llm?.close();
    await rm(sandboxDir, { recursive: true, force: true });
  });

  it('says at start-up which backend runs the code, and /health/detailed shows it', async () => {
    await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('execute_code runs code in bubblewrap'), 'the sandbox start-up line');
    expect((await health(gw)).sandbox).toMatchObject({ backend: 'bubblewrap' });
  });

  it('asks before running code; approved, Python writes a PNG that reaches the Telegram chat as a photo', async () => {
    const chatId = 50_001;
    tg.injectMessage({ chatId, userId: chatId, text: 'png draw me a chart' });
    // Code execution needs approval by default: the question comes with buttons, and nothing runs before the press.
    const question = await waitFor(
      () => tg.sent.find((s) => s.chat_id === String(chatId) && s.method === 'sendMessage' && (s.text ?? '').includes('execute_code')),
      { timeoutMs: 60_000, what: 'the approval question' },
    );
    const buttons = (question.params.reply_markup as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }).inline_keyboard.flat();
    const approve = buttons.find((b) => b.text === '✅ Approve once');
    expect(approve).toBeDefined();
    expect(tg.sent.some((s) => s.chat_id === String(chatId) && s.method === 'sendPhoto')).toBe(false);
    tg.pressButton({ chatId, userId: chatId, messageId: question.message_id ?? 0, data: approve?.callback_data ?? '' });
    const photo = await waitFor(() => tg.sent.find((s) => s.chat_id === String(chatId) && s.method === 'sendPhoto'), {
      timeoutMs: 60_000,
      what: 'the chart, sent as a photo',
    });
    expect(photo.file?.shownAs).toBe('photo');
    expect(pngSize(photo.file!.data)).toEqual({ width: 40, height: 30 });
    await waitFor(() => repliesIn(tg, chatId).includes('Here is your chart.'), { timeoutMs: 30_000, what: 'the reply text' });

    // The model was offered the tool and told what the run printed and that the file goes to the user.
    const turn = llm.requests.filter((r) => lastUserText(r).startsWith('png '));
    expect(toolNamesOf(turn[0])).toContain('execute_code');
    const result = toolResults(turn[1]).join('\n');
    expect(result).toMatch(/^Exit code 0/);
    expect(result).toMatch(/wrote chart\.png \d+/);
    expect(result).toMatch(/Sent to the user after your reply: chart\.png \(image\/png/);
  });

  it('lets the code read a file the user sent in the turn, from inputs/', async () => {
    const chatId = 50_002;
    tg.injectMessage({
      chatId,
      userId: chatId,
      caption: 'read the numbers',
      document: { fileName: 'sales.csv', mimeType: 'text/csv', content: 'month,sales\njan,42\n' },
    });
    await waitFor(() => repliesIn(tg, chatId).includes('I read your file.'), { timeoutMs: 60_000, what: 'the reply after reading the file' });
    const turn = llm.requests.filter((r) => lastUserText(r).startsWith('read '));
    const result = toolResults(turn[1]).join('\n');
    expect(result).toMatch(/^Exit code 0/);
    expect(result).toContain("['sales.csv']");
    expect(result).toContain('MONTH,SALES\nJAN,42');
    // The user's own file is not sent back to them.
    expect(tg.sent.filter((s) => s.chat_id === String(chatId) && s.file)).toEqual([]);
  });
});

describe('execute_code without a usable backend', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herald-sandbox-none-'));
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    llm.respondWith(respond);
    // Docker only, at a socket nobody serves: no backend, whatever this host has.
    gw = await startGateway({
      env: telegramEnv(tg, llm, {
        HERALD_SANDBOX_BACKEND: 'docker',
        DOCKER_HOST: `unix://${join(dir, 'no-docker.sock')}`,
        HERALD_SANDBOX_DIR: join(dir, 'sandbox'),
      }),
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await tg?.close();
    await llm?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('does not offer the tool, and says why at start-up and in /health/detailed', async () => {
    const line = await gw.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('execute_code not offered'), 'the sandbox start-up line');
    expect(line.msg).toMatch(/^execute_code not offered: docker: no daemon \(/);
    expect(line.level).toBe(40); // pino's warn
    expect((await health(gw)).sandbox).toEqual({ backend: null, unavailable: [expect.stringMatching(/^docker: no daemon \(/)] });

    const chatId = 50_003;
    tg.injectMessage({ chatId, userId: chatId, text: 'hello there' });
    await waitFor(() => repliesIn(tg, chatId).includes('re: hello there'), { timeoutMs: 30_000, what: 'the reply' });
    const tools = toolNamesOf(llm.requests.find((r) => lastUserText(r) === 'hello there')!);
    expect(tools).toContain('current_time');
    expect(tools).not.toContain('execute_code');
  });
});
