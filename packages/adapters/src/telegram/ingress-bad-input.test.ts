/**
 * Polling ingress and malformed updates (issue 48): an update whose ids break the Bot API's rules is skipped with a
 * warning, not dropped through an unhandled rejection, and the updates after it are taken as usual.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTelegramFake, type TelegramFake } from '../../../../test/fakes/telegram/index.js';
import { startIngress, type RunningIngress } from './test-support.js';

let fake: TelegramFake;
let running: RunningIngress | null = null;
const rejections: unknown[] = [];
const onRejection = (reason: unknown): void => void rejections.push(reason);

beforeEach(async () => {
  fake = await startTelegramFake();
  rejections.length = 0;
  process.on('unhandledRejection', onRejection);
});

afterEach(async () => {
  process.off('unhandledRejection', onRejection);
  await running?.ingress.stop();
  running = null;
  await fake.close();
});

/** A logger that keeps every line it writes. */
function recordingLogger(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines };
}

describe('telegram polling ingress, malformed updates', () => {
  it('skips a message in chat 0, a topic 0 and a press in chat 0 with a warning each, and takes the next message', async () => {
    const { logger, lines } = recordingLogger();
    running = await startIngress(fake, { logger });
    const forum = { id: -1001234567890, type: 'supergroup', is_forum: true };
    const message = { message_id: 1, date: 1_700_000_000, chat: { id: 0, type: 'private' }, from: { id: 777, first_name: 'Ann' }, text: 'hi' };
    fake.injectUpdate({ message });
    fake.injectUpdate({ message: { ...message, chat: forum, is_topic_message: true, message_thread_id: 0 } });
    fake.injectUpdate({ callback_query: { id: 'q1', from: { id: 777 }, data: 'x', message } });
    fake.injectMessage({ chatId: 777, userId: 777, text: 'after them' });
    await fake.waitFor(() => running!.received.length === 1);
    expect(running.received.map((m) => m.text)).toEqual(['after them']);
    const warnings = lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warnings).toEqual(['telegram update malformed; refused', 'telegram update malformed; refused', 'telegram callback query malformed; dropped']);
    expect(lines.filter((l) => (l.level as number) >= 50)).toEqual([]);
    expect(rejections).toEqual([]);
  });
});
