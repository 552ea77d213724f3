import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { AuthError, BadRequestError, NetworkError, NotFoundError, RateLimitedError } from '../errors.js';
import { fencesBalanced } from '../shared/chunk.js';
import { SLACK_MAX_MESSAGE_LENGTH, SLACK_REPLY_METADATA_EVENT } from './config.js';
import { createSlackEgress, type SlackEgress } from './egress.js';

const logger = pino({ level: 'silent' });

let fake: SlackFake;
let egress: SlackEgress;

beforeEach(async () => {
  fake = await startSlackFake();
  egress = createSlackEgress({ botToken: fake.botToken, apiUrl: fake.apiUrl, logger });
});
afterEach(async () => {
  await fake.close();
});

describe('Slack egress', () => {
  it('posts Markdown as mrkdwn into the conversation thread', async () => {
    const sent = await egress.send('slack:C0CHAN:1700000000.000100', '## Plan\n**Step one**: see [docs](https://d.io) & *relax*');
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]).toMatchObject({
      channel: 'C0CHAN',
      threadTs: '1700000000.000100',
      text: '*Plan*\n*Step one*: see <https://d.io|docs> &amp; _relax_',
    });
    expect(sent.messageIds).toEqual([fake.sent[0].ts]);
  });

  it('answers a top-level DM at the top level (no thread_ts)', async () => {
    await egress.send('slack:D0USER', 'hi');
    expect(fake.sent[0].channel).toBe('D0USER');
    expect(fake.sent[0].threadTs).toBeUndefined();
  });

  it('splits a 90,000-character answer into numbered chunks Slack accepts, fences balanced', async () => {
    const code = Array.from({ length: 1500 }, (_, i) => `const value${i} = compute(${i}); // line ${i}`).join('\n');
    const prose = 'Some words in a sentence that goes on. '.repeat(600);
    const answer = `${prose}\n\`\`\`ts\n${code}\n\`\`\`\n${prose}`;
    expect(answer.length).toBeGreaterThan(90_000);

    const sent = await egress.send('slack:C0CHAN:1700000000.000100', answer);
    expect(fake.sent.length).toBe(3);
    expect(sent.messageIds).toEqual(fake.sent.map((s) => s.ts));
    fake.sent.forEach((s, i) => {
      expect(s.text.length).toBeLessThanOrEqual(SLACK_MAX_MESSAGE_LENGTH);
      expect(s.text).toMatch(new RegExp(`[ \\n]\\(${i + 1}/3\\)$`));
      expect(fencesBalanced(s.text)).toBe(true);
      expect(s.threadTs).toBe('1700000000.000100');
    });
    // Every line of code arrived, in order.
    const all = fake.sent.map((s) => s.text).join('\n');
    expect(all.indexOf('value0 =')).toBeLessThan(all.indexOf('value1499 ='));
    expect(all).toContain('const value1499 = compute(1499);');
  });

  it('edits with chat.update', async () => {
    const { messageIds } = await egress.send('slack:C0CHAN:1.000001', 'working…');
    await egress.edit('slack:C0CHAN:1.000001', messageIds[0], 'done **now**');
    expect(fake.updates).toEqual([{ channel: 'C0CHAN', ts: messageIds[0], text: 'done *now*' }]);
  });

  it('reacts by Slack name, treating already_reacted and no_reaction as success', async () => {
    // No transport is connected in this test; the user's message is stored all the same.
    const { ts } = await fake.channelMessage({ channel: 'C0CHAN', user: 'U1', text: 'hello' });
    await egress.react(`slack:C0CHAN:${ts}`, ts, '👀');
    await egress.react(`slack:C0CHAN:${ts}`, ts, '👀'); // already_reacted
    await egress.react(`slack:C0CHAN:${ts}`, ts, '✅');
    await egress.react(`slack:C0CHAN:${ts}`, ts, '👀', true);
    await egress.react(`slack:C0CHAN:${ts}`, ts, '👀', true); // no_reaction
    expect(fake.reactions.map((r) => `${r.action}:${r.name}`)).toEqual(['add:eyes', 'add:white_check_mark', 'remove:eyes']);
    expect([...(fake.message('C0CHAN', ts)?.reactions.keys() ?? [])]).toEqual(['white_check_mark']);
  });

  it('reacts with each default status reaction by its Slack name', async () => {
    const { ts } = await fake.channelMessage({ channel: 'C0CHAN', user: 'U1', text: 'hello' });
    for (const emoji of Object.values(egress.statusReactions ?? {})) await egress.react(`slack:C0CHAN:${ts}`, ts, emoji);
    expect(fake.reactions.map((r) => r.name)).toEqual(['eyes', 'gear', 'white_check_mark', 'warning']);
  });

  it('waits out Retry-After on ratelimited and then succeeds', async () => {
    fake.failNext('chat.postMessage', 'ratelimited', { retryAfterSec: 1 });
    await egress.send('slack:D0USER', 'patience');
    const posts = fake.calls.filter((c) => c.method === 'chat.postMessage');
    expect(posts).toHaveLength(2);
    expect(posts[1].at - posts[0].at).toBeGreaterThanOrEqual(950);
    expect(fake.sent.map((s) => s.text)).toEqual(['patience']);
  });

  it('gives up with RateLimitedError after two waits', async () => {
    const quick = createSlackEgress({ botToken: fake.botToken, apiUrl: fake.apiUrl, logger, rateLimitRetries: 2 });
    for (let i = 0; i < 3; i++) fake.failNext('reactions.add', 'ratelimited', { retryAfterSec: 0 });
    const err = await quick.react('slack:D0USER', '1.000001', 'eyes').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(fake.calls.filter((c) => c.method === 'reactions.add')).toHaveLength(3);
  });

  it('does not hold a worker for a long Retry-After', async () => {
    fake.failNext('chat.postMessage', 'ratelimited', { retryAfterSec: 120 });
    const err = await egress.send('slack:D0USER', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(120_000);
  });

  it('sets the thread status as typing, and stops trying after missing_scope', async () => {
    await egress.typing('slack:C0CHAN:1700000000.000100');
    expect(fake.statuses).toEqual([{ channelId: 'C0CHAN', threadTs: '1700000000.000100', status: 'is typing…' }]);

    fake.failNext('assistant.threads.setStatus', 'missing_scope');
    await egress.typing('slack:C0CHAN:1700000000.000100'); // silently skipped
    await egress.typing('slack:C0CHAN:1700000000.000100');
    expect(egress.typingDisabled).toBe(true);
    expect(fake.calls.filter((c) => c.method === 'assistant.threads.setStatus')).toHaveLength(2);
  });

  it('skips typing at the top level of a DM (no thread to show a status in)', async () => {
    await egress.typing('slack:D0USER');
    expect(fake.calls).toHaveLength(0);
  });

  it('maps Slack errors to typed errors', async () => {
    const bad = createSlackEgress({ botToken: 'xoxb-wrong', apiUrl: fake.apiUrl, logger });
    await expect(bad.send('slack:D0USER', 'x')).rejects.toBeInstanceOf(AuthError);
    fake.failNext('chat.postMessage', 'channel_not_found');
    await expect(egress.send('slack:C0GONE:1.000001', 'x')).rejects.toBeInstanceOf(NotFoundError);
    fake.failNext('chat.postMessage', 'msg_too_long');
    const tooLong = await egress.send('slack:D0USER', 'x').catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(BadRequestError);
    expect(String(tooLong)).toMatch(/msg_too_long/);
  });

  it('resends as plain text when Slack rejects the formatting', async () => {
    fake.failNext('chat.postMessage', 'invalid_blocks');
    const { messageIds } = await egress.send('slack:D0USER', '**hi**');
    expect(messageIds).toHaveLength(1);
    expect(fake.sent).toEqual([expect.objectContaining({ text: '*hi*', mrkdwn: false })]);
  });

  it('sends plain text untouched when asked', async () => {
    await egress.send('slack:D0USER', '**raw** <b>', { plain: true });
    expect(fake.sent[0]).toMatchObject({ text: '**raw** <b>', mrkdwn: false });
  });

  it('gives up on a call Slack never answers, as a network error delivery can retry', async () => {
    const impatient = createSlackEgress({ botToken: fake.botToken, apiUrl: fake.apiUrl, logger, clientOptions: { timeout: 300 } });
    fake.failNext('chat.postMessage', 'silence', { silence: true });
    await expect(impatient.send('slack:D0DM', 'hello?')).rejects.toBeInstanceOf(NetworkError);
    await impatient.send('slack:D0DM', 'hello again');
    expect(fake.sent.map((s) => s.text)).toEqual(['hello again']);
  });

  describe('a reply sent again after a crash (idempotencyKey, recover)', () => {
    /** Three chunks of about 30,000 characters each. */
    const threeChunks = (): string => Array.from({ length: 3 }, (_, i) => `Part ${i}. ${'words in a row '.repeat(2_000)}`).join('\n\n');

    /** The first attempt: Slack accepts chunk 0, then the worker dies before recording it or sending more. */
    async function crashAfterFirstChunk(conv: string, key: string): Promise<string> {
      let first = '';
      const err = await egress
        .send(conv, threeChunks(), {
          idempotencyKey: key,
          onChunkSent: (_i, id) => {
            first = id;
            throw new Error('worker killed');
          },
        })
        .catch((e: unknown) => e);
      expect(err).toEqual(new Error('worker killed'));
      expect(fake.sent).toHaveLength(1);
      return first;
    }

    const lookups = (): string[] => fake.calls.filter((c) => c.method.startsWith('conversations.')).map((c) => c.method);

    it('marks every chunk with the key and its index in the message metadata', async () => {
      expect(egress.duplicateSafety).toBe('detectable');
      await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-1' });
      expect(fake.sent.map((m) => m.metadata)).toEqual(
        [0, 1, 2].map((chunk) => ({ event_type: SLACK_REPLY_METADATA_EVENT, event_payload: { key: 'turn-1', chunk } })),
      );
    });

    it('in a DM, posts only chunks 2 and 3 after a crash after chunk 1, and returns all three ids', async () => {
      const first = await crashAfterFirstChunk('slack:D0USER', 'turn-7');
      const recorded: [number, string][] = [];
      const result = await egress.send('slack:D0USER', threeChunks(), {
        idempotencyKey: 'turn-7',
        recover: true,
        onChunkSent: (i, id) => void recorded.push([i, id]),
      });

      expect(fake.sent.map((m) => m.text.slice(-5))).toEqual(['(1/3)', '(2/3)', '(3/3)']);
      expect(result).toEqual({ messageIds: fake.sent.map((m) => m.ts), recovered: 1 });
      expect(result.messageIds[0]).toBe(first);
      expect(recorded).toEqual(fake.sent.map((m, i) => [i, m.ts]));
      expect(lookups()).toEqual(['conversations.history']);
      expect(fake.calls.find((c) => c.method === 'conversations.history')?.args).toMatchObject({
        channel: 'D0USER',
        include_all_metadata: 'true',
      });
    });

    it('in a thread, looks in the thread and posts only the missing chunks', async () => {
      const { ts: root } = await fake.channelMessage({ channel: 'C0CHAN', user: 'U0ALICE', text: 'question' });
      const conv = `slack:C0CHAN:${root}`;
      await crashAfterFirstChunk(conv, 'turn-8');
      const result = await egress.send(conv, threeChunks(), { idempotencyKey: 'turn-8', recover: true });
      expect(fake.sent.map((m) => [m.threadTs, m.text.slice(-5)])).toEqual([
        [root, '(1/3)'],
        [root, '(2/3)'],
        [root, '(3/3)'],
      ]);
      expect(result).toEqual({ messageIds: fake.sent.map((m) => m.ts), recovered: 1 });
      expect(lookups()).toEqual(['conversations.replies']);
    });

    it("sends nothing when the whole reply went out, and never takes another reply's chunks for its own", async () => {
      await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-other' });
      const done = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-9' });
      const again = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-9', recover: true });
      expect(again).toEqual({ messageIds: done.messageIds, recovered: 3 });
      expect(fake.sent).toHaveLength(6);
    });

    it('finds an earlier chunk past the first page of a busy conversation', async () => {
      await crashAfterFirstChunk('slack:D0USER', 'turn-10');
      for (let i = 0; i < 120; i++) await fake.dm({ user: 'U0USER', text: `message ${i}` });
      const result = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-10', recover: true });
      expect(result.recovered).toBe(1);
      expect(fake.sent).toHaveLength(3);
      expect(lookups()).toEqual(['conversations.history', 'conversations.history']);
    });

    it('with recover, leaves alone the chunks the gateway already knows of (skipChunks)', async () => {
      const done = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-11' });
      const rest = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-11', recover: true, skipChunks: 1 });
      expect(rest).toEqual({ messageIds: done.messageIds.slice(1), recovered: 2 });
      expect(fake.sent).toHaveLength(3);
    });

    it('sends everything with a warning when the app may not read the conversation (missing im:history)', async () => {
      const warnings: Record<string, unknown>[] = [];
      const watched = createSlackEgress({
        botToken: fake.botToken,
        apiUrl: fake.apiUrl,
        logger: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) }),
      });
      await crashAfterFirstChunk('slack:D0USER', 'turn-12');
      fake.setScopes(['chat:write']);

      const result = await watched.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-12', recover: true });

      expect(result).toEqual({ messageIds: fake.sent.slice(1).map((m) => m.ts), recovered: 0 });
      expect(fake.sent.map((m) => m.text.slice(-5))).toEqual(['(1/3)', '(1/3)', '(2/3)', '(3/3)']);
      expect(warnings).toEqual([
        expect.objectContaining({ method: 'conversations.history', code: 'missing_scope', msg: expect.stringMatching(/could not look/) }),
      ]);
    });

    it('does not wait a long rate limit out for the look-up: sends everything instead', async () => {
      await crashAfterFirstChunk('slack:D0USER', 'turn-13');
      fake.failNext('conversations.history', 'ratelimited', { retryAfterSec: 60 });
      const result = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-13', recover: true });
      expect(result.recovered).toBe(0);
      expect(fake.sent).toHaveLength(4);
    });

    it('makes no look-up without recover', async () => {
      await crashAfterFirstChunk('slack:D0USER', 'turn-14');
      const result = await egress.send('slack:D0USER', threeChunks(), { idempotencyKey: 'turn-14' });
      expect(result).toEqual({ messageIds: fake.sent.slice(1).map((m) => m.ts) });
      expect(lookups()).toEqual([]);
    });
  });

  it('reports each chunk to onChunkSent as Slack accepts it, in order, with its index', async () => {
    const events: string[] = [];
    const answer = Array.from({ length: 3 }, (_, i) => `Part ${i}. ${'words in a row '.repeat(2_000)}`).join('\n\n');
    const result = await egress.send('slack:D0USER', answer, {
      onChunkSent: async (i, id) => {
        events.push(`${i}:${id}:${fake.sent.length}`);
        await Promise.resolve();
      },
    });
    expect(result.messageIds).toHaveLength(3);
    expect(events).toEqual(result.messageIds.map((id, i) => `${i}:${id}:${i + 1}`));
  });
});
