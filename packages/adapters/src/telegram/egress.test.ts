/** Egress: the Bot API client against the stand-in, from send()/edit()/typing()/react() to what it recorded. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramFake, telegramErrors, type TelegramFake } from '../../../../test/fakes/telegram/index.js';
import { AuthError, BadRequestError, NetworkError, NotFoundError, RateLimitedError } from '../errors.js';
import { fencesBalanced } from '../shared/chunk.js';
import type { Sleep } from './config.js';
import { TelegramEgress } from './egress.js';
import { silentLogger } from './test-support.js';

const DM = 777;
const FORUM = -1009876543210;

let fake: TelegramFake;
let egress: TelegramEgress;
let slept: number[];

beforeEach(async () => {
  fake = await startTelegramFake();
  slept = [];
  const sleep: Sleep = async (ms) => {
    slept.push(ms);
  };
  egress = new TelegramEgress({ token: fake.token, apiRoot: fake.apiRoot, logger: silentLogger, sleep });
  fake.injectMessage({ chatId: DM, userId: DM, text: 'hi' }); // the chat exists once the user wrote
});

afterEach(async () => {
  await fake.close();
});

const sends = () => fake.sent.filter((s) => s.method === 'sendMessage');

describe('telegram egress send', () => {
  it('renders Markdown as Telegram HTML', async () => {
    const { messageIds } = await egress.send(`telegram:${DM}`, 'Use **bold**, `a < b` and [docs](https://example.com)');
    expect(messageIds).toHaveLength(1);
    const [sent] = sends();
    expect(sent.parse_mode).toBe('HTML');
    expect(sent.text).toBe('Use bold, a < b and docs');
    expect(fake.world.chats.get(DM)!.messages.get(Number(messageIds[0]))!.entities).toEqual([
      { type: 'bold', offset: 4, length: 4 },
      { type: 'code', offset: 10, length: 5 },
      { type: 'text_link', offset: 20, length: 4, url: 'https://example.com' },
    ]);
  });

  it('splits a 10,000-character answer into 3 numbered chunks within 4096, code fences kept balanced', async () => {
    const prose = Array.from({ length: 23 }, (_, i) => `Paragraph ${i}: ${'lorem ipsum '.repeat(8)}`).join('\n');
    const code = Array.from({ length: 130 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`).join('\n');
    const answer = `${prose}\n\`\`\`ts\n${code}\n\`\`\`\n${prose}`;
    expect(answer.length).toBeGreaterThan(10_000);

    const { messageIds } = await egress.send(`telegram:${DM}`, answer, { replyTo: '1' });
    expect(messageIds).toHaveLength(3);
    const chunks = sends();
    expect(chunks).toHaveLength(3);
    chunks.forEach((c, i) => {
      expect(c.parse_mode).toBe('HTML'); // every chunk's HTML was accepted: no tag left open across a split
      expect(c.text!.length).toBeLessThanOrEqual(4096);
      expect(c.text!.endsWith(`(${i + 1}/3)`)).toBe(true);
    });
    // Only the first chunk replies to the user's message.
    expect(chunks.map((c) => c.reply_to_message_id)).toEqual([1, undefined, undefined]);
    // The code block continues as a code block (with its language) in whichever chunks it spans.
    const withCode = chunks.filter((c) => String(c.params.text).includes('<pre><code class="language-ts">'));
    expect(withCode.length).toBeGreaterThanOrEqual(2);
    // Nothing is lost: every code line reaches the user.
    const all = chunks.map((c) => c.text).join('\n');
    for (let i = 0; i < 130; i++) expect(all).toContain(`const value${i} = compute(${i});`);
  });

  it('reports each chunk to onChunkSent as Telegram accepts it, in order, with its index (after skipChunks too)', async () => {
    const answer = Array.from({ length: 3 }, (_, i) => `Part ${i}: ${'lorem ipsum '.repeat(300)}`).join('\n\n');
    const events: string[] = [];
    const onChunkSent = async (i: number, id: string): Promise<void> => {
      events.push(`${i}:${id}:${sends().length}`);
      await Promise.resolve();
    };
    const all = await egress.send(`telegram:${DM}`, answer, { onChunkSent });
    expect(all.messageIds).toHaveLength(3);
    expect(events).toEqual(all.messageIds.map((id, i) => `${i}:${id}:${i + 1}`));

    events.length = 0;
    const rest = await egress.send(`telegram:${DM}`, answer, { skipChunks: 2, onChunkSent });
    expect(events).toEqual([`2:${rest.messageIds[0]}:4`]);
  });

  it('cannot avoid a repeat: the key and recover are accepted, and the reply is sent again (duplicateSafety none)', async () => {
    expect(egress.duplicateSafety).toBe('none');
    const first = await egress.send(`telegram:${DM}`, 'answer', { idempotencyKey: 'turn-1' });
    const again = await egress.send(`telegram:${DM}`, 'answer', { idempotencyKey: 'turn-1', recover: true });
    expect(again.recovered).toBeUndefined();
    expect(again.messageIds).not.toEqual(first.messageIds);
    expect(sends().map((s) => s.text)).toEqual(['answer', 'answer']);
    // Nothing Telegram does not know went out with the messages.
    expect(Object.keys(sends()[1].params).sort()).toEqual(['chat_id', 'parse_mode', 'text']);
  });

  it('keeps code fences balanced in every chunk when the chunks go out as plain text', async () => {
    const code = Array.from({ length: 400 }, (_, i) => `print(${i})  # line ${i}`).join('\n');
    fake.failNext('sendMessage', telegramErrors.cantParseEntities(), 10, (p) => p.parse_mode === 'HTML');
    await egress.send(`telegram:${DM}`, `Code:\n\`\`\`python\n${code}\n\`\`\`\nDone.`);
    const chunks = sends();
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.parse_mode).toBeUndefined();
      expect(c.text!.length).toBeLessThanOrEqual(4096);
      expect(fencesBalanced(c.text!.replace(/ \(\d+\/\d+\)$/, ''))).toBe(true);
    }
  });

  it('resends as plain text when Telegram cannot parse the HTML', async () => {
    fake.failNext('sendMessage', telegramErrors.cantParseEntities('Unsupported start tag "foo" at byte offset 3'));
    await egress.send(`telegram:${DM}`, 'some **markdown** here');
    const [sent] = sends();
    expect(sent.parse_mode).toBeUndefined();
    expect(sent.text).toBe('some **markdown** here');
    expect(fake.callsOf('sendMessage').map((c) => c.status)).toEqual([400, 200]);
  });

  it('sends as plain text when asked to', async () => {
    await egress.send(`telegram:${DM}`, '**not bold**', { plain: true });
    expect(sends()[0]).toMatchObject({ text: '**not bold**' });
    expect(sends()[0].parse_mode).toBeUndefined();
  });

  it('drops the reply target when the replied message is gone', async () => {
    await egress.send(`telegram:${DM}`, 'answer', { replyTo: '9999' });
    expect(sends()[0].reply_to_message_id).toBeUndefined();
    expect(fake.callsOf('sendMessage').map((c) => c.description ?? c.status)).toEqual(['Bad Request: message to be replied not found', 200]);
  });

  it('waits out a 429 retry_after and sends once', async () => {
    fake.failNext('sendMessage', telegramErrors.tooManyRequests(3));
    await egress.send(`telegram:${DM}`, 'patience');
    expect(slept).toEqual([3000]);
    expect(sends()).toHaveLength(1);
  });

  it('gives up after two 429 retries with RateLimitedError carrying retry_after', async () => {
    fake.failNext('sendMessage', telegramErrors.tooManyRequests(7), 3);
    const err = await egress.send(`telegram:${DM}`, 'too fast').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(7000);
    expect(slept).toEqual([7000, 7000]);
    expect(sends()).toHaveLength(0);
  });

  it('falls back to the chat when a forum topic no longer exists', async () => {
    fake.injectMessage({ chatId: FORUM, userId: 5, isForum: true, text: 'x' });
    await egress.send(`telegram:${FORUM}:4242`, 'reply for a deleted topic');
    const [sent] = sends();
    expect(sent.chat_id).toBe(String(FORUM));
    expect(sent.message_thread_id).toBeUndefined();
  });

  it('maps Telegram failures to the typed errors', async () => {
    await expect(egress.send('telegram:424242', 'nobody here')).rejects.toBeInstanceOf(NotFoundError);
    fake.failNext('sendMessage', telegramErrors.blocked());
    await expect(egress.send(`telegram:${DM}`, 'blocked')).rejects.toBeInstanceOf(AuthError);
    const wrongToken = new TelegramEgress({ token: '1:nope', apiRoot: fake.apiRoot, logger: silentLogger });
    await expect(wrongToken.send(`telegram:${DM}`, 'x')).rejects.toBeInstanceOf(AuthError);
    await expect(egress.send('discord:123', 'x')).rejects.toThrow(/not a Telegram conversation id/);
    await expect(egress.send(`telegram:${DM}`, '   ')).rejects.toBeInstanceOf(BadRequestError);
    fake.failNext('sendMessage', 'network');
    await expect(egress.send(`telegram:${DM}`, 'x')).rejects.toBeInstanceOf(NetworkError);
    fake.failNext('sendMessage', telegramErrors.internal());
    await expect(egress.send(`telegram:${DM}`, 'x')).rejects.toBeInstanceOf(NetworkError);
  });
});

describe('telegram egress edit, typing, react', () => {
  it('edits a message in place, and treats "message is not modified" as success', async () => {
    const { messageIds } = await egress.send(`telegram:${DM}`, 'Thinking…');
    await egress.edit(`telegram:${DM}`, messageIds[0], 'The answer is **42**');
    await egress.edit(`telegram:${DM}`, messageIds[0], 'The answer is **42**');
    const edits = fake.callsOf('editMessageText');
    expect(edits.map((c) => c.status)).toEqual([200, 400]);
    expect(edits[1].description).toMatch(/message is not modified/);
    expect(fake.world.chats.get(DM)!.messages.get(Number(messageIds[0]))!.text).toBe('The answer is 42');
  });

  it('waits out a 429 during an edit', async () => {
    const { messageIds } = await egress.send(`telegram:${DM}`, 'v1');
    fake.failNext('editMessageText', telegramErrors.tooManyRequests(2));
    await egress.edit(`telegram:${DM}`, messageIds[0], 'v2');
    expect(slept).toEqual([2000]);
    expect(fake.sent.filter((s) => s.method === 'editMessageText').map((s) => s.text)).toEqual(['v2']);
  });

  it('re-edits as plain text when the HTML is refused, and reports a missing message', async () => {
    const { messageIds } = await egress.send(`telegram:${DM}`, 'v1');
    fake.failNext('editMessageText', telegramErrors.cantParseEntities());
    await egress.edit(`telegram:${DM}`, messageIds[0], '*v2*');
    expect(fake.sent.at(-1)).toMatchObject({ method: 'editMessageText', text: '*v2*' });
    await expect(egress.edit(`telegram:${DM}`, '9999', 'x')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('shows typing in the chat, or in the topic', async () => {
    fake.injectMessage({ chatId: FORUM, userId: 5, threadId: 12, text: 'x' });
    await egress.typing(`telegram:${DM}`);
    await egress.typing(`telegram:${FORUM}:12`);
    expect(fake.sent.map((s) => [s.method, s.chat_id, s.action, s.message_thread_id])).toEqual([
      ['sendChatAction', String(DM), 'typing', undefined],
      ['sendChatAction', String(FORUM), 'typing', 12],
    ]);
    expect(egress.typingRefreshMs).toBe(4000);
  });

  it('reacts, removes the reaction, and ignores chats that refuse reactions', async () => {
    const userMessage = fake.injectMessage({ chatId: DM, userId: DM, text: 'nice' }).message as { message_id: number };
    await egress.react(`telegram:${DM}`, String(userMessage.message_id), '👍');
    await egress.react(`telegram:${DM}`, `${DM}:${userMessage.message_id}`, '👍', true);
    fake.disableReactions(DM);
    await expect(egress.react(`telegram:${DM}`, String(userMessage.message_id), '👀')).resolves.toBeUndefined();
    expect(fake.sent.map((s) => s.reaction)).toEqual([[{ type: 'emoji', emoji: '👍' }], []]);
  });
});
