/**
 * Stream health in the real gateway: with HERALD_STREAM_STALL_TIMEOUT_MS set low, a model stream that goes silent
 * is cut at that limit (not the SDK's 10 minutes), the key's HTTP client is rebuilt and the call retried; a
 * connection cut mid-stream is handled the same way. The user sees the retry's status line, then one answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from './fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from './fakes/telegram/index.js';
import { deleteRedisPrefix, uniquePrefix } from './helpers/cluster.js';
import { repliesIn, telegramEnv } from './helpers/env.js';
import { startGateway, type GatewayProcess } from './helpers/gateway.js';
import { waitFor } from './helpers/ports.js';

const STALL_MS = 1_000;
const REBUILT = 'LLM connection failed; HTTP client rebuilt before the retry';

describe('stream health in the gateway', () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  const prefix = uniquePrefix('stream-health');

  beforeAll(async () => {
    [tg, llm] = await Promise.all([startTelegramFake(), startFakeOpenAI()]);
    gw = await startGateway({ env: telegramEnv(tg, llm, { HERALD_REDIS_PREFIX: prefix, HERALD_STREAM_STALL_TIMEOUT_MS: String(STALL_MS) }) });
  });
  afterAll(async () => {
    await gw?.stop();
    await Promise.all([tg?.close(), llm?.close()]);
    await deleteRedisPrefix(prefix);
  });

  const ask = async (chat: number, text: string, answer: string): Promise<void> => {
    tg.injectMessage({ chatId: chat, userId: chat, text });
    await waitFor(() => repliesIn(tg, chat).includes(answer), { timeoutMs: 30_000, what: `"${answer}"` });
  };

  it('a stream that goes silent is cut at the configured limit, the client rebuilt, and the retry answers', async () => {
    // Silent after the role chunk, before any text: a stall after text is continued from that text instead
    // (loop/call-model.ts; agent-loop-fidelity.test.ts), which is not what this test is about.
    llm.script({ text: 'the first words and then silence', stallAfterEvents: 1 }, { text: 'answered after the stall' });
    await ask(801, 'hello', 'answered after the stall');
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[0]!.aborted).toBe(true);
    const line = await gw.waitForLog((l) => l.msg === REBUILT, 'the rebuild log line');
    expect(line).toMatchObject({ provider: 'openai', model: 'gpt-4.1-mini', error: `stream stalled: nothing received for ${STALL_MS} ms` });
    expect(String(line.key)).toMatch(/^sha256:[0-9a-f]{8}$/);
    // The retry's status line, then the answer: no partial text, no error.
    expect(repliesIn(tg, 801)).toEqual([expect.stringMatching(/^⏳ openai:gpt-4\.1-mini: timeout; retry 1\/3/), 'answered after the stall']);
  });

  it('a connection cut mid-stream is retried on a rebuilt client too', async () => {
    const before = gw.logs().filter((l) => l.msg === REBUILT).length;
    // Cut after the role chunk, before any text (a cut after text is continued from it, as a stall is).
    llm.script({ text: 'cut off in the middle of the sentence', dropAfterEvents: 1 }, { text: 'answered after the reset' });
    await ask(802, 'again', 'answered after the reset');
    const rebuilt = gw.logs().filter((l) => l.msg === REBUILT);
    expect(rebuilt).toHaveLength(before + 1);
    expect(String(rebuilt.at(-1)!.error)).toMatch(/^connection failed/);
    expect(repliesIn(tg, 802)).toEqual([expect.stringMatching(/^⏳ openai:gpt-4\.1-mini: server_error; retry 1\/3/), 'answered after the reset']);
    expect(JSON.stringify(gw.logs())).not.toContain('sk-test');
  });
});
