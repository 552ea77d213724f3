import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { PlatformEgress } from '@herald/adapters';
import { emptyUsage, type ConversationResult } from '@herald/agent-core';
import { useTempStores } from '../../../../../packages/agent-core/src/store/test-support.js';
import { loadConfig } from '../../support/config/load.js';
import { outboundLimits } from '../../out/limits.js';
import { ReplyFiles } from '../../out/reply-files.js';
import type { OutboundServices } from '../../out/services.js';
import { VoiceReplies } from '../../features/sessions/voice-replies.js';
import { NO_ANSWER_TEXT, REASONING_VIEW_MAX_CHARS, finishReply, hasReasoning, withReasoning } from './finish.js';
import { userFacingError } from '../user-errors.js';

const temp = useTempStores('sqlite');
const egress = { platform: 'telegram' } as Pick<PlatformEgress, 'platform'> as PlatformEgress;

async function reply(result: Partial<ConversationResult>): Promise<string> {
  const store = await temp.open();
  const limits = outboundLimits(loadConfig({ env: {}, file: null }));
  const services: OutboundServices = { limits, replyPictures: false, fetch: {}, speech: null, voice: new VoiceReplies(store.sql) };
  const full: ConversationResult = {
    finalResponse: '',
    newMessages: [],
    usage: emptyUsage(),
    apiCalls: 1,
    completed: false,
    interrupted: false,
    model: 'm',
    ...result,
  };
  const out = await finishReply(services, {
    result: full,
    files: new ReplyFiles(limits),
    sessionKey: 'k',
    egress,
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
  });
  return out.reply;
}

describe('finishReply', () => {
  it('keeps the text the model wrote before an error, with the error below it', async () => {
    const text = await reply({ finalResponse: 'Half an answer.', error: { kind: 'server_error', message: 'boom' } });
    expect(text).toBe(`Half an answer.\n\n${userFacingError('server_error')}`);
    expect(await reply({ error: { kind: 'auth', message: 'no' } })).toBe(userFacingError('auth'));
  });

  it('says why there is no answer when the loop knows, and "(no answer)" only when it does not', async () => {
    expect(await reply({ partial: 'thinking budget exhausted' })).toBe('(no answer: thinking budget exhausted)');
    expect(await reply({ completed: true })).toBe(NO_ANSWER_TEXT);
    expect(await reply({ finalResponse: 'Done.' })).toBe('Done.');
  });
});

describe('withReasoning', () => {
  it("quotes the turn's thinking above the answer, and leaves an answer without thinking alone", () => {
    const turn = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: null, reasoning: 'Look it up first.', tool_calls: [] },
      { role: 'assistant' as const, content: 'Sunny.', reasoning: 'It says sunny.\nSay so.' },
    ];
    expect(withReasoning('Sunny.', turn)).toBe('💭 Reasoning:\n> Look it up first.\n> \n> It says sunny.\n> Say so.\n\nSunny.');
    expect(withReasoning('Sunny.', [{ role: 'assistant', content: 'Sunny.' }])).toBe('Sunny.');
  });

  it('cuts a long thinking to a readable length', () => {
    const text = withReasoning('ok', [{ role: 'assistant', content: 'ok', reasoning: 'x'.repeat(REASONING_VIEW_MAX_CHARS * 2) }]);
    expect(text.length).toBeLessThan(REASONING_VIEW_MAX_CHARS + 40);
    expect(text).toMatch(/…\n\nok$/);
  });
});

describe('hasReasoning', () => {
  it('is true only when an assistant message of the turn carries non-blank reasoning (the switch is read only then)', () => {
    expect(hasReasoning([{ role: 'assistant', content: 'Sunny.' }])).toBe(false);
    expect(hasReasoning([{ role: 'assistant', content: 'Sunny.', reasoning: '  \n' }])).toBe(false);
    expect(
      hasReasoning([
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Sunny.', reasoning: 'Say so.' },
      ]),
    ).toBe(true);
  });
});
