/**
 * WhatsApp beyond one number (issue 51): a second business number of the same Meta app as an extra account
 * (HERALD_BOT_ACCOUNTS) routed to its own profile, both on the one webhook URL; and a gateway restart, across which
 * Meta's redelivery of an answered message stays answered once and a message posted while the gateway was down is
 * answered when Meta delivers it again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startWhatsAppFake, type WhatsAppFake } from './fakes/whatsapp/index.js';
import type { GatewayProcess } from './helpers/gateway.js';
import { lastUserText } from './helpers/llm-tags.js';
import { waitFor } from './helpers/ports.js';
import { deleteRedisPrefix } from './helpers/redis-keys.js';
import { testPrefix } from './helpers/test-run.js';
import { startWhatsAppGateway, whatsappTexts } from './helpers/whatsapp.js';

const REPLY_TIMEOUT_MS = 20_000;
const SALES = { phoneNumberId: '200000000000002', displayPhone: '15550002222' };

let wa: WhatsAppFake;
let llm: FakeLLM;
let gw: GatewayProcess;
let dir = '';
const prefix = testPrefix('wa-accounts');

function start(): Promise<GatewayProcess> {
  return startWhatsAppGateway(wa, llm, {
    dir,
    prefix,
    numbers: 2,
    env: {
      HERALD_BOT_ACCOUNTS: JSON.stringify([{ platform: 'whatsapp', name: 'sales', phone_number_id: SALES.phoneNumberId }]),
      HERALD_PROFILES: JSON.stringify({ desk: { system_prompt: 'You are the sales desk.' } }),
      HERALD_ROUTES: JSON.stringify([{ platform: 'whatsapp', account: 'sales', profile: 'desk' }]),
    },
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herald-wa-'));
  wa = await startWhatsAppFake();
  wa.addNumber(SALES);
  llm = await startFakeOpenAI();
  llm.respondWith(async (req) => ({ text: `ok: ${lastUserText(req)}` }));
  gw = await start();
}, 120_000);

afterAll(async () => {
  await gw?.stop();
  await deleteRedisPrefix(prefix);
  rmSync(dir, { recursive: true, force: true });
  await wa?.close();
  await llm?.close();
});

describe('several WhatsApp numbers', () => {
  it("each number's messages are answered from that number, the extra one under its route's profile", async () => {
    await wa.text('hello main number', { from: '15557770001' });
    await wa.text('hello sales number', { from: '15557770002', phoneNumberId: SALES.phoneNumberId });
    await waitFor(() => whatsappTexts(wa, '15557770001').length > 0 && whatsappTexts(wa, '15557770002').length > 0, {
      timeoutMs: REPLY_TIMEOUT_MS,
      what: 'both numbers to answer',
    });
    expect(wa.sentTo('15557770001').map((s) => [s.phoneNumberId, s.text])).toEqual([[wa.phoneNumberId, 'ok: hello main number']]);
    expect(wa.sentTo('15557770002').map((s) => [s.phoneNumberId, s.text])).toEqual([[SALES.phoneNumberId, 'ok: hello sales number']]);
    const salesCall = llm.requests.find((r) => lastUserText(r) === 'hello sales number');
    expect(JSON.stringify(salesCall?.body.messages)).toContain('You are the sales desk.');
    const mainCall = llm.requests.find((r) => lastUserText(r) === 'hello main number');
    expect(JSON.stringify(mainCall?.body.messages)).not.toContain('You are the sales desk.');
  });

  it('a webhook for a number this gateway does not serve is acknowledged and answered by nobody', async () => {
    const res = await wa.text('wrong number', { from: '15557770003', phoneNumberId: '999999999' });
    expect(res.status).toBe(200);
    await gw.waitForLog((l) => l.msg === 'whatsapp webhook for a phone number this gateway does not serve', 'the warning');
    expect(llm.requests.some((r) => lastUserText(r) === 'wrong number')).toBe(false);
  });
});

describe('restart', () => {
  it("an answered message redelivered after a restart is not answered again; one sent while down is answered on Meta's retry", async () => {
    const user = '15557770010';
    const answered = await wa.text('before the restart', { from: user });
    await waitFor(() => whatsappTexts(wa, user).length === 1, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the first reply' });
    await gw.stop();
    // Meta cannot reach the gateway: its POST fails, and it will deliver the message again later.
    await expect(wa.text('while down', { from: user, id: 'wamid.WHILEDOWN1' })).rejects.toThrow();
    gw = await start();
    const again = await wa.text('before the restart', { from: user, id: answered.id });
    expect(again.status).toBe(200);
    expect((await wa.text('while down', { from: user, id: 'wamid.WHILEDOWN1' })).status).toBe(200);
    await waitFor(() => whatsappTexts(wa, user).length >= 2, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the reply to the message sent while down' });
    await wa.text('after', { from: user });
    await waitFor(() => whatsappTexts(wa, user).length >= 3, { timeoutMs: REPLY_TIMEOUT_MS, what: 'the last reply' });
    expect(whatsappTexts(wa, user)).toEqual(['ok: before the restart', 'ok: while down', 'ok: after']);
  });
});
