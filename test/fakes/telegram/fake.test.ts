/** The stand-in speaks the Bot API wire format: checked with plain HTTP, no client library in between. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramFake, telegramErrors, type TelegramFake } from './index.js';

let fake: TelegramFake;

beforeEach(async () => {
  fake = await startTelegramFake();
});

afterEach(async () => {
  await fake.close();
});

async function call(method: string, params: Record<string, unknown> = {}, token = fake.token) {
  const res = await fetch(`${fake.apiRoot}/bot${token}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as { ok: boolean; result?: unknown; error_code?: number; description?: string } };
}

describe('Telegram Bot API stand-in', () => {
  it("answers a wrong token with 401 Unauthorized in Telegram's error shape", async () => {
    expect(await call('getMe', {}, '1:bad')).toEqual({
      status: 401,
      body: { ok: false, error_code: 401, description: 'Unauthorized' },
    });
  });

  it('accepts form-encoded bodies and rejects unknown chats', async () => {
    fake.injectMessage({ chatId: 5, userId: 5, text: 'hi' });
    const res = await fetch(`${fake.apiRoot}/bot${fake.token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ chat_id: '5', text: 'form', reply_parameters: JSON.stringify({ message_id: 1 }) }),
    });
    expect(res.status).toBe(200);
    expect(fake.sent[0]).toMatchObject({ chat_id: '5', text: 'form', reply_to_message_id: 1 });
    expect(await call('sendMessage', { chat_id: 6, text: 'x' })).toMatchObject({
      status: 400,
      body: { description: 'Bad Request: chat not found' },
    });
  });

  it("refuses HTML Telegram cannot parse, with Telegram's messages", async () => {
    fake.injectMessage({ chatId: 5, userId: 5, text: 'hi' });
    const send = (text: string) => call('sendMessage', { chat_id: 5, text, parse_mode: 'HTML' });
    expect((await send('<b>open')).body.description).toBe('Bad Request: can\'t parse entities: Can\'t find end tag corresponding to start tag "b"');
    expect((await send('x <foo>y</foo>')).body.description).toBe('Bad Request: can\'t parse entities: Unsupported start tag "foo" at byte offset 2');
    expect((await send('<b><i>x</b></i>')).body.description).toMatch(/Unmatched end tag at byte offset 7, expected "<\/i>", found "<\/b>"/);
    expect((await send('a < b')).status).toBe(400);
    expect((await send('a &lt; b &amp; <b>c</b>')).body.ok).toBe(true);
  });

  it('counts the 4096 limit after entity parsing', async () => {
    fake.injectMessage({ chatId: 5, userId: 5, text: 'hi' });
    const fits = await call('sendMessage', { chat_id: 5, text: `<b>${'a'.repeat(4096)}</b>`, parse_mode: 'HTML' });
    const over = await call('sendMessage', { chat_id: 5, text: 'a'.repeat(4097) });
    expect(fits.status).toBe(200);
    expect(over.body).toEqual({ ok: false, error_code: 400, description: 'Bad Request: message is too long' });
  });

  it('long-polls: a pending getUpdates returns as soon as a message arrives, and offsets confirm', async () => {
    const pending = call('getUpdates', { timeout: 30 });
    await new Promise((r) => setTimeout(r, 50));
    const update = fake.injectMessage({ chatId: 5, userId: 5, text: 'wake up' });
    const { body } = await pending;
    expect(body.result).toEqual([update]);
    expect(fake.pendingUpdates()).toBe(1);
    await call('getUpdates', { offset: (update.update_id as number) + 1, timeout: 0 });
    expect(fake.pendingUpdates()).toBe(0);
  });

  it('terminates the older of two concurrent polls with 409, and refuses polling while a webhook is set', async () => {
    const first = call('getUpdates', { timeout: 30 });
    await new Promise((r) => setTimeout(r, 50));
    const second = call('getUpdates', { timeout: 0 });
    expect((await first).body).toEqual({ ok: false, ...telegramErrors.pollConflict() });
    expect((await second).status).toBe(200);

    await call('setWebhook', { url: 'http://127.0.0.1:9/hook', secret_token: 'abc' });
    expect((await call('getUpdates')).body.description).toMatch(/can't use getUpdates method while webhook is active/);
  });

  it('knows forum topics: unknown topics and the General id are refused for sends, General is fine for typing', async () => {
    fake.injectMessage({ chatId: -1007, userId: 5, threadId: 3, text: 'in topic 3' });
    expect((await call('sendMessage', { chat_id: -1007, text: 'x', message_thread_id: 3 })).status).toBe(200);
    expect((await call('sendMessage', { chat_id: -1007, text: 'x', message_thread_id: 99 })).body.description).toBe('Bad Request: message thread not found');
    expect((await call('sendMessage', { chat_id: -1007, text: 'x', message_thread_id: 1 })).status).toBe(400);
    expect((await call('sendChatAction', { chat_id: -1007, action: 'typing', message_thread_id: 1 })).status).toBe(200);
  });

  it('fails the next call as told, then recovers', async () => {
    fake.failNext('getMe', telegramErrors.tooManyRequests(5));
    expect((await call('getMe')).body).toEqual({ ok: false, ...telegramErrors.tooManyRequests(5) });
    fake.failNext('getMe', 'network');
    await expect(call('getMe')).rejects.toThrow();
    expect((await call('getMe')).status).toBe(200);
  });

  it('serves files named by getFile', async () => {
    fake.injectMessage({ chatId: 5, userId: 5, document: { fileName: 'a.txt', mimeType: 'text/plain', content: 'file body' } });
    const doc = [...fake.world.files.values()][0];
    const { body } = await call('getFile', { file_id: doc.fileId });
    const path = (body.result as { file_path: string }).file_path;
    const res = await fetch(`${fake.apiRoot}/file/bot${fake.token}/${path}`);
    expect(await res.text()).toBe('file body');
  });

  it('inline keyboards: callback_data over 64 bytes is refused; a press is a callback_query answered once', async () => {
    fake.injectMessage({ chatId: 7, userId: 7, text: 'hi' });
    const tooLong = await call('sendMessage', {
      chat_id: 7,
      text: 'pick',
      reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'x'.repeat(65) }]] },
    });
    expect(tooLong.body).toMatchObject({ ok: false, description: 'Bad Request: BUTTON_DATA_INVALID' });
    const sent = await call('sendMessage', { chat_id: 7, text: 'pick', reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] } });
    const messageId = (sent.body.result as { message_id: number }).message_id;
    expect(() => fake.pressButton({ chatId: 7, userId: 7, messageId, data: 'b' })).toThrow(/no button/);
    const id = fake.pressButton({ chatId: 7, userId: 7, messageId, data: 'a' });
    const updates = (await call('getUpdates', { allowed_updates: ['message', 'callback_query'] })).body.result as Array<{
      callback_query?: { id: string; data: string };
    }>;
    expect(updates.at(-1)?.callback_query).toMatchObject({ id, data: 'a' });
    expect((await call('answerCallbackQuery', { callback_query_id: id, text: 'ok' })).body.ok).toBe(true);
    expect((await call('answerCallbackQuery', { callback_query_id: id })).body).toMatchObject({ ok: false, error_code: 400 });
  });

  it('sendMessageDraft: private chats only, non-zero draft_id, stores no message; 404 on a server without it', async () => {
    fake.injectMessage({ chatId: 8, userId: 8, text: 'hi' });
    fake.injectMessage({ chatId: -9, userId: 8, text: 'hi group' });
    expect((await call('sendMessageDraft', { chat_id: 8, draft_id: 5, text: 'partial' })).body).toEqual({ ok: true, result: true });
    expect((await call('sendMessageDraft', { chat_id: 8, draft_id: 0, text: 'partial' })).body.ok).toBe(false);
    expect((await call('sendMessageDraft', { chat_id: -9, draft_id: 5, text: 'partial' })).body.ok).toBe(false);
    expect(fake.sent.filter((s) => s.method === 'sendMessage')).toEqual([]);
    fake.supportDrafts(false);
    expect(await call('sendMessageDraft', { chat_id: 8, draft_id: 5, text: 'partial' })).toEqual({
      status: 404,
      body: { ok: false, error_code: 404, description: 'Not Found' },
    });
  });
});
