import { describe, expect, it } from 'vitest';
import type { MailboxEntry, TurnPayload } from '../../queue/mailbox.js';
import { composeUserMessage } from './prepare.js';

const entry = (p: Partial<TurnPayload> & { text: string }, seq = 1): MailboxEntry => ({
  id: `telegram.1.${seq}`,
  sessionKey: 'agent:main:discord:thread:C:T',
  seq,
  enqueuedAt: Date.now(),
  payload: {
    platform: 'discord',
    conversationId: 'discord:C:T',
    chatType: 'thread',
    chatId: 'C',
    threadId: 'T',
    userId: 'u1',
    messageId: String(seq),
    platformMessageId: String(seq),
    ...p,
  },
});

describe('composeUserMessage', () => {
  it('joins one person’s messages as they wrote them', () => {
    expect(composeUserMessage([entry({ text: 'first' }, 1), entry({ text: 'second' }, 2)], [])).toBe('first\n\nsecond');
  });

  it('one message without files is its text as it is, named speaker or not', () => {
    expect(composeUserMessage([entry({ text: 'hello  there\n', userName: 'ana' })], [])).toBe('hello  there\n');
    expect(composeUserMessage([entry({ text: '' })], [], [[]])).toBe('');
  });

  it('says who said what when messages of several people are answered together', () => {
    const merged = composeUserMessage(
      [entry({ text: 'deploy today?', userName: 'ana' }, 1), entry({ text: 'not before 5', userId: 'u2', userName: 'bo' }, 2)],
      [],
    );
    expect(merged).toBe('[ana]: deploy today?\n\n[bo]: not before 5');
  });

  it('adds reply-to context only when the quoted message is not in the history', () => {
    const quoted = { platformMessageId: '9', text: 'the plan from Monday', fromBot: true };
    expect(composeUserMessage([entry({ text: 'still valid?', quoted })], [])).toBe('[Replying to: "the plan from Monday"]\nstill valid?');
    expect(composeUserMessage([entry({ text: 'still valid?', quoted })], [{ role: 'assistant', content: 'Here is the plan from Monday.' }])).toBe(
      'still valid?',
    );
  });

  it("puts what each message's files became after its text, so a photo without a caption is not an empty message", () => {
    expect(composeUserMessage([entry({ text: '' })], [], [['[Image: photo]']])).toBe('[Image: photo]');
    expect(composeUserMessage([entry({ text: 'see this' }, 1), entry({ text: 'and this' }, 2)], [], [['[Document "plan.pdf"]\nPlan'], []])).toBe(
      'see this\n[Document "plan.pdf"]\nPlan\n\nand this',
    );
  });

  it('joins the parts of a text the client split with a line break, as one text, and keeps the next message apart', () => {
    const split = { id: 'C:1', kind: 'text' as const };
    const entries = [
      entry({ text: 'the first part of it', partOf: split }, 1),
      entry({ text: 'and its end', partOf: { ...split, last: true } }, 2),
      entry({ text: 'a new message' }, 3),
    ];
    expect(composeUserMessage(entries, [])).toBe('the first part of it\nand its end\n\na new message');
  });
});
