import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSlackFake, type SlackFake } from '../../../../test/fakes/slack/index.js';
import { AuthError, BadRequestError, NetworkError, NotFoundError, RateLimitedError } from '../errors.js';
import { fencesBalanced } from '../shared/chunk.js';
import { SLACK_MAX_MESSAGE_LENGTH } from './config.js';
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
    await egress.react('slack:C0CHAN:' + ts, ts, '👀');
    await egress.react('slack:C0CHAN:' + ts, ts, '👀'); // already_reacted
    await egress.react('slack:C0CHAN:' + ts, ts, '✅');
    await egress.react('slack:C0CHAN:' + ts, ts, '👀', true);
    await egress.react('slack:C0CHAN:' + ts, ts, '👀', true); // no_reaction
    expect(fake.reactions.map((r) => `${r.action}:${r.name}`)).toEqual(['add:eyes', 'add:white_check_mark', 'remove:eyes']);
    expect([...(fake.message('C0CHAN', ts)?.reactions.keys() ?? [])]).toEqual(['white_check_mark']);
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

});
