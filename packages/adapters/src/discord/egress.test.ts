/**
 * Real @discordjs/rest against the Discord stand-in: from `send()` / `edit()` / `typing()` / `react()` to what
 * Discord recorded.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discordFailures, startDiscordFake, type DiscordFake } from '../../../../test/fakes/discord/index.js';
import { AuthError, BadRequestError, NetworkError, NotFoundError, RateLimitedError } from '../errors.js';
import { fencesBalanced } from '../shared/chunk.js';
import type { PlatformEgress } from '../types.js';
import { DISCORD_MAX_MESSAGE_LENGTH } from './config.js';
import { createDiscordEgress } from './egress.js';
import { discordNonce } from './message-parts.js';

const logger = pino({ level: 'silent' });

let fake: DiscordFake;
let egress: PlatformEgress;
let channelId: string;
let conv: string;

beforeEach(async () => {
  fake = await startDiscordFake();
  egress = createDiscordEgress({ botToken: fake.token, apiUrl: fake.apiRoot, logger });
  channelId = fake.fixtures.generalChannelId;
  conv = `discord:${channelId}`;
});

afterEach(async () => {
  await fake.close();
});

function userMessage(content = 'question', channel = channelId): string {
  return String(fake.postUserMessage({ channelId: channel, author: fake.fixtures.alice, content }).id);
}

/** About 5,000 characters of prose with a code block straddling the first chunk boundary. */
function longAnswer(): string {
  const prose = (n: number): string => Array.from({ length: n }, (_, i) => `Line ${i}: ${'lorem ipsum '.repeat(5).trim()}`).join('\n');
  const code = ['```ts', ...Array.from({ length: 20 }, (_, i) => `const value${i} = compute(${i}); // step ${i}`), '```'].join('\n');
  return `${prose(26)}\n${code}\n${prose(34)}`;
}

describe('discord egress', () => {
  it('splits a 5,000-character answer into 3 messages within the limit, fences balanced, the first replying to the user', async () => {
    const question = userMessage();
    const answer = longAnswer();
    expect(answer.length).toBeGreaterThan(4800);
    expect(answer.length).toBeLessThan(5200);

    const result = await egress.send(conv, answer, { replyTo: question });

    expect(fake.sent).toHaveLength(3);
    expect(result.messageIds).toEqual(fake.sent.map((m) => m.id));
    for (const [i, m] of fake.sent.entries()) {
      expect(m.channelId).toBe(channelId);
      expect(m.content.length).toBeLessThanOrEqual(DISCORD_MAX_MESSAGE_LENGTH);
      // Balanced as sent: after a closing fence the (i/N) suffix goes on its own line.
      expect(fencesBalanced(m.content)).toBe(true);
      expect(m.content).toMatch(new RegExp(`[ \\n]\\(${i + 1}/3\\)$`));
      expect(m.allowed_mentions).toEqual({ parse: ['users'], replied_user: true });
    }
    // The code block straddled the first cut: closed at the end of chunk 1, reopened with its language in chunk 2.
    expect(fake.sent[1].content.startsWith('```ts\n')).toBe(true);
    expect(fake.sent[0].message_reference).toEqual({ message_id: question, fail_if_not_exists: false });
    expect(fake.sent[1].message_reference).toBeUndefined();
    expect(fake.sent[2].message_reference).toBeUndefined();
  });

  describe('a reply sent again after a crash (idempotencyKey)', () => {
    it('creates each chunk once and returns the same ids when the same reply is sent twice with the same key', async () => {
      expect(egress.duplicateSafety).toBe('idempotent');
      const question = userMessage();
      const answer = longAnswer();
      const first = await egress.send(conv, answer, { replyTo: question, idempotencyKey: 'turn-42' });
      // The worker died before recording anything: the queue runs the turn again and the gateway resends it all.
      const again = await egress.send(conv, answer, { replyTo: question, idempotencyKey: 'turn-42' });

      expect(first.messageIds).toHaveLength(3);
      expect(again.messageIds).toEqual(first.messageIds);
      expect(fake.sent.map((m) => m.id)).toEqual(first.messageIds);
      const creates = fake.requests.filter((r) => r.route === 'createMessage');
      expect(creates.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const nonces = fake.sent.map((m) => m.nonce);
      expect(nonces).toEqual([0, 1, 2].map((i) => discordNonce('turn-42', i)));
      expect(new Set(nonces).size).toBe(3);
      for (const n of nonces) expect(String(n)).toMatch(/^[A-Za-z0-9_-]{25}$/);
    });

    it('posts new messages for a different key, and none carry a nonce without one', async () => {
      const a = await egress.send(conv, 'same words', { idempotencyKey: 'turn-1' });
      const b = await egress.send(conv, 'same words', { idempotencyKey: 'turn-2' });
      const c = await egress.send(conv, 'same words');
      expect(new Set([...a.messageIds, ...b.messageIds, ...c.messageIds]).size).toBe(3);
      expect(fake.sent.map((m) => m.nonce)).toEqual([discordNonce('turn-1', 0), discordNonce('turn-2', 0), undefined]);
    });

    it('sends only the chunks not yet known, each still matched by its index, and reports them in order', async () => {
      const answer = longAnswer();
      const first = await egress.send(conv, answer, { idempotencyKey: 'turn-7' });
      // The gateway recorded chunk 0 before the crash; chunks 1 and 2 went out unrecorded.
      const recorded: [number, string][] = [];
      const rest = await egress.send(conv, answer, {
        idempotencyKey: 'turn-7',
        skipChunks: 1,
        onChunkSent: (i, id) => void recorded.push([i, id]),
      });
      expect(rest.messageIds).toEqual(first.messageIds.slice(1));
      expect(recorded).toEqual([
        [1, first.messageIds[1]],
        [2, first.messageIds[2]],
      ]);
      expect(fake.sent).toHaveLength(3);
    });

    it('keeps the nonce when resending without a refused reply reference', async () => {
      fake.failNext('createMessage', discordFailures.replyReferenceRefused());
      const { messageIds } = await egress.send(conv, 'hello', { replyTo: userMessage(), idempotencyKey: 'turn-9' });
      expect(fake.sent).toEqual([expect.objectContaining({ id: messageIds[0], nonce: discordNonce('turn-9', 0) })]);
    });

    it("posts again once Discord's nonce window has passed (the limit of the guarantee)", async () => {
      const first = await egress.send(conv, 'late', { idempotencyKey: 'turn-3' });
      fake.advanceClock(fake.world.nonceWindowMs);
      const late = await egress.send(conv, 'late', { idempotencyKey: 'turn-3' });
      expect(late.messageIds).not.toEqual(first.messageIds);
      expect(fake.sent).toHaveLength(2);
    });
  });

  it('reports each chunk to onChunkSent as Discord accepts it, in order, with its index', async () => {
    const events: string[] = [];
    const result = await egress.send(conv, longAnswer(), {
      onChunkSent: async (i, id) => {
        // Each chunk is reported before the next is sent.
        events.push(`${i}:${id}:${fake.sent.length}`);
        await Promise.resolve();
      },
    });
    expect(events).toEqual(result.messageIds.map((id, i) => `${i}:${id}:${i + 1}`));
  });

  it('resends without the reply reference when Discord refuses it', async () => {
    const question = userMessage();
    fake.failNext('createMessage', discordFailures.replyReferenceRefused());
    const result = await egress.send(conv, 'Here you go.', { replyTo: question });
    expect(fake.sent).toEqual([{ id: result.messageIds[0], channelId, content: 'Here you go.', allowed_mentions: { parse: ['users'], replied_user: true } }]);
    expect(fake.requests.filter((r) => r.route === 'createMessage').map((r) => r.status)).toEqual([400, 200]);
  });

  it('resends without the reply reference on Unknown Message (10008)', async () => {
    fake.failNext('createMessage', { status: 404, code: 10008, message: 'Unknown Message' });
    await egress.send(conv, 'still delivered', { replyTo: userMessage() });
    expect(fake.sent.map((m) => [m.content, m.message_reference])).toEqual([['still delivered', undefined]]);
  });

  it('replies inside a thread, without a cross-channel reference to the message that started it', async () => {
    // A thread started from a message takes that message's id; the message itself stays in the parent channel.
    const threadId = fake.createUserThread(channelId, 'topic', fake.fixtures.alice);
    const followUp = userMessage('follow-up', threadId);
    const threadConv = `discord:${channelId}:${threadId}`;

    await egress.send(threadConv, 'first answer', { replyTo: threadId });
    await egress.send(threadConv, 'second answer', { replyTo: followUp });

    expect(fake.sent.map((m) => [m.channelId, m.message_reference?.message_id])).toEqual([
      [threadId, undefined],
      [threadId, followUp],
    ]);
  });

  it('adapts Markdown Discord lacks and never lets @everyone ping', async () => {
    await egress.send(conv, '#### Totals\n| a | b |\n|---|---|\n| 1 | 2 |\n@everyone look');
    expect(fake.sent[0].content).toBe('**Totals**\n```\na | b\n--+--\n1 | 2\n```\n@everyone look');
    expect(fake.sent[0].allowed_mentions).toEqual({ parse: ['users'], replied_user: true });
  });

  it('sends plain text untouched when asked', async () => {
    await egress.send(conv, '#### raw', { plain: true });
    expect(fake.sent[0].content).toBe('#### raw');
  });

  it('shows typing in the thread of a thread conversation', async () => {
    const threadId = fake.createUserThread(channelId, 'topic', fake.fixtures.alice);
    await egress.typing(`discord:${channelId}:${threadId}`);
    await egress.typing(conv);
    expect(fake.typingCalls.map((t) => t.channelId)).toEqual([threadId, channelId]);
    expect(egress.typingRefreshMs).toBe(8000);
  });

  it('edits a message in place, and refuses an edit longer than Discord allows without calling it', async () => {
    const { messageIds } = await egress.send(conv, 'thinking…');
    await egress.edit(conv, messageIds[0], 'done: **42**');
    expect(fake.edits).toEqual([{ channelId, messageId: messageIds[0], content: 'done: **42**' }]);

    await expect(egress.edit(conv, messageIds[0], 'x'.repeat(2001))).rejects.toBeInstanceOf(BadRequestError);
    expect(fake.requests.filter((r) => r.route === 'editMessage')).toHaveLength(1);
  });

  it('reacts with Unicode and custom emoji, removes reactions, and finds a thread starter in the parent channel', async () => {
    const question = userMessage();
    await egress.react(conv, question, '👀');
    await egress.react(conv, question, '<:herald:123456789012345678>');
    await egress.react(conv, question, '👀', true);
    // The thread started from `question` has its id; reacting on the starter must target the parent channel.
    await egress.react(`discord:${channelId}:${question}`, question, '✅');
    expect(fake.reactions).toEqual([
      { channelId, messageId: question, emoji: '👀', action: 'add' },
      { channelId, messageId: question, emoji: 'herald:123456789012345678', action: 'add' },
      { channelId, messageId: question, emoji: '👀', action: 'remove' },
      { channelId, messageId: question, emoji: '✅', action: 'add' },
    ]);
  });

  it('waits out a short 429 and delivers', async () => {
    fake.failNext('createMessage', discordFailures.rateLimited(0.2));
    await egress.send(conv, 'after the wait');
    expect(fake.sent.map((m) => m.content)).toEqual(['after the wait']);
    expect(fake.requests.filter((r) => r.route === 'createMessage').map((r) => r.status)).toEqual([429, 200]);
  });

  it('surfaces a long 429 as RateLimitedError with the wait, instead of holding the worker', async () => {
    fake.failNext('createMessage', discordFailures.rateLimited(30));
    const err = await egress.send(conv, 'later').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(30_000);
    expect(fake.sent).toHaveLength(0);
  });

  it('maps Discord errors to the typed errors', async () => {
    await expect(egress.send('discord:42', 'nowhere')).rejects.toBeInstanceOf(NotFoundError);

    fake.failNext('typing', discordFailures.missingPermissions());
    await expect(egress.typing(conv)).rejects.toBeInstanceOf(AuthError);

    fake.failNext('createMessage', discordFailures.serverError());
    await expect(egress.send(conv, 'x')).rejects.toBeInstanceOf(NetworkError);

    await expect(egress.react(conv, userMessage(), 'not_an_emoji')).rejects.toBeInstanceOf(BadRequestError);
    await expect(egress.send(conv, '   ')).rejects.toBeInstanceOf(BadRequestError);
    await expect(egress.send('telegram:1', 'x')).rejects.toThrow(/discord:" prefix/);
    await expect(egress.typing('discord:general')).rejects.toBeInstanceOf(BadRequestError);
  });

  it('reports a wrong token as AuthError', async () => {
    const wrong = createDiscordEgress({ botToken: 'wrong', apiUrl: fake.apiRoot, logger });
    await expect(wrong.send(conv, 'hi')).rejects.toBeInstanceOf(AuthError);
  });

  it('reports an unreachable Discord as NetworkError', async () => {
    const url = fake.apiRoot;
    await fake.close();
    const offline = createDiscordEgress({ botToken: fake.token, apiUrl: url, logger });
    await expect(offline.typing(conv)).rejects.toBeInstanceOf(NetworkError);
    fake = await startDiscordFake();
  });
});
