import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { waitFor } from '../../../../test/helpers/ports.js';
import type { PlatformEgress, SendOptions, SentMessage } from '@herald/adapters';
import type { AgentEvent } from '@herald/agent-core';
import { TurnAbort } from '../queue/worker.js';
import type { ToolProgressMode } from '../support/config/progress.js';
import { LiveTurn, STOPPED_MARK, STREAM_CURSOR, THINKING_LINE, TOOL_WRITING_ICON, argsPreview, editIntervalMs } from './progress.js';

const log = pino({ level: 'silent' });

/** A chat as the user sees it: messages by id, with their current text; every call recorded. */
class ChatEgress implements PlatformEgress {
  readonly platform = 'discord' as const;
  readonly duplicateSafety = 'none' as const;
  readonly typingRefreshMs = 50;
  readonly voiceFormat = 'mp3' as const;
  readonly messages = new Map<string, string>();
  readonly calls: string[] = [];
  typings = 0;
  private next = 1;
  constructor(readonly maxMessageLength = 2000) {}
  async sendFile(): Promise<string> {
    throw new Error('this test sends no files');
  }
  async send(_c: string, text: string, _o?: SendOptions): Promise<SentMessage> {
    const id = String(this.next++);
    this.messages.set(id, text);
    this.calls.push(`send ${id}`);
    return { messageIds: [id] };
  }
  async edit(_c: string, id: string, text: string): Promise<void> {
    if (!this.messages.has(id)) throw new Error('no such message');
    this.messages.set(id, text);
    this.calls.push(`edit ${id}`);
  }
  async typing(): Promise<void> {
    this.typings++;
  }
  async react(): Promise<void> {}
  texts(): string[] {
    return [...this.messages.values()];
  }
}

function live(
  opts: { streaming?: boolean; tools?: ToolProgressMode; interim?: boolean; typingDelayMs?: number; egress?: ChatEgress; controller?: AbortController } = {},
) {
  const egress = opts.egress ?? new ChatEgress();
  const controller = opts.controller ?? new AbortController();
  const turn = new LiveTurn({
    egress,
    conversationId: 'discord:1',
    platform: 'discord',
    chatType: 'dm',
    settings: {
      streaming: { telegram: false, discord: opts.streaming ?? false, slack: false, whatsapp: false, matrix: false },
      typingDelayMs: opts.typingDelayMs ?? 0,
      interimMessages: opts.interim ?? false,
      toolProgress: { telegram: 'off', discord: opts.tools ?? 'off', slack: 'off', whatsapp: 'off', matrix: 'off' },
      reactions: { telegram: 'off', discord: 'off', slack: 'off', whatsapp: 'off', matrix: 'off' },
    },
    signal: controller.signal,
    canDeliver: async () => true,
    log,
    editIntervalMs: 30,
    deliveryBaseDelayMs: 1,
  });
  return { turn, egress, controller };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const delta = (text: string): AgentEvent => ({ type: 'text_delta', text });
const tool = (id: string, name: string, args: Record<string, unknown> = {}): AgentEvent => ({ type: 'tool_start', id, name, args });

describe('LiveTurn', () => {
  it('text written before tool calls is a message of its own: sent, or kept in the streamed message', async () => {
    const interim = (text: string): AgentEvent => ({ type: 'interim_text', text });
    const plain = live({ interim: true });
    plain.turn.onEvent(delta('Let me look.'));
    plain.turn.onEvent(interim('Let me look.'));
    plain.turn.onEvent(tool('t1', 'lookup'));
    await plain.turn.close();
    expect(plain.egress.texts()).toEqual(['Let me look.']);

    const streamed = live({ interim: true, streaming: true });
    streamed.turn.onEvent(delta('Let me look.'));
    await waitFor(() => streamed.egress.texts().length === 1, { what: 'the streamed message' });
    streamed.turn.onEvent(interim('Let me look.'));
    streamed.turn.onEvent(tool('t1', 'lookup'));
    streamed.turn.onEvent(delta('Found it.'));
    expect(await streamed.turn.finish('Found it.')).toEqual(['2']);
    expect(streamed.egress.texts()).toEqual(['Let me look.', 'Found it.']);

    const off = live({ interim: false });
    off.turn.onEvent(interim('Let me look.'));
    await off.turn.close();
    expect(off.egress.texts()).toEqual([]);
  });

  it('a reasoning model thinking shows one "thinking…" line per response (never its content); nothing with progress off', async () => {
    const thinking = (text: string): AgentEvent => ({ type: 'reasoning_delta', text });
    const { turn, egress } = live({ tools: 'all' });
    turn.onEvent(thinking('secret plan'));
    turn.onEvent(thinking(' more of it'));
    turn.onEvent(tool('t1', 'lookup'));
    turn.onEvent(thinking('second thoughts'));
    await turn.close();
    expect(egress.texts()).toEqual([`${THINKING_LINE}\n⚙️ \`lookup\`\n${THINKING_LINE}`]);
    const quiet = live({ tools: 'off' });
    quiet.turn.onEvent(thinking('secret plan'));
    await quiet.turn.close();
    expect(quiet.egress.texts()).toEqual([]);
  });

  it('streams by editing one message and finishes with exactly one copy of the answer', async () => {
    const { turn, egress } = live({ streaming: true });
    for (const t of ['Hel', 'lo ', 'wor', 'ld']) {
      turn.onEvent(delta(t));
      await sleep(15);
    }
    await waitFor(() => egress.texts()[0] === `Hello world${STREAM_CURSOR}`, { what: 'the edit with every delta' });
    expect(egress.texts()).toEqual([`Hello world${STREAM_CURSOR}`]);
    const ids = await turn.finish('Hello world');
    expect(ids).toEqual(['1']);
    await turn.close();
    await sleep(60);
    expect(egress.texts()).toEqual(['Hello world']);
    expect(egress.calls.filter((c) => c.startsWith('send'))).toHaveLength(1);
  });

  it('spaces edits out: many deltas, few edits', async () => {
    const { turn, egress } = live({ streaming: true });
    const started = Date.now();
    for (let i = 0; i < 40; i++) {
      turn.onEvent(delta(`w${i} `));
      await sleep(2);
    }
    const elapsed = Date.now() - started;
    await turn.finish('done');
    // One edit per 30 ms at most (plus the final one), however many deltas came.
    expect(egress.calls.filter((c) => c.startsWith('edit')).length).toBeLessThanOrEqual(Math.floor(elapsed / 30) + 2);
    expect(egress.texts()).toEqual(['done']);
  });

  it('drops text of an attempt that is retried, and of a response that led to tools', async () => {
    const { turn, egress } = live({ streaming: true });
    turn.onEvent(delta('half an answ'));
    turn.onEvent({ type: 'status', kind: 'retry', message: 'openai:x: server_error; retry 1/3 in 1.0 s' });
    turn.onEvent(delta('Let me look.'));
    turn.onEvent(tool('t1', 'web_fetch', { url: 'https://example.com' }));
    turn.onEvent(delta('Found it.'));
    const streamed = await waitFor(() => [...egress.messages.values()].find((t) => t === `Found it.${STREAM_CURSOR}`), { what: 'the answer streamed' });
    expect(streamed).toBe(`Found it.${STREAM_CURSOR}`);
    // Nothing of the dropped attempts is left in any message.
    expect([...egress.messages.values()].some((t) => t.includes('half an answ') || t.includes('Let me look.'))).toBe(false);
    // The retry notice is a short status line of its own message.
    expect(egress.texts().some((t) => t.startsWith('⏳ `openai:x: server_error'))).toBe(true);
  });

  it('while the model writes a tool call, the preview shows "🔧 name …" below the text so far; the call starting ends it', async () => {
    const writing = (name: string, argsChars: number): AgentEvent => ({ type: 'tool_call_delta', index: 0, name, argsChars });
    const { turn, egress } = live({ streaming: true });
    turn.onEvent(delta('Let me fetch it.'));
    turn.onEvent(writing('web_fetch', 0));
    turn.onEvent(writing('web_fetch', 40));
    const preview = `Let me fetch it.\n\n${TOOL_WRITING_ICON} \`web_fetch\` …`;
    await waitFor(() => egress.texts().includes(preview), { what: 'the tool being written in the preview' });
    turn.onEvent(tool('t1', 'web_fetch', { url: 'https://example.com' }));
    turn.onEvent(delta('Found it.'));
    await waitFor(() => egress.texts().includes(`Found it.${STREAM_CURSOR}`), { what: 'the answer streamed after the tool' });
    const off = live();
    off.turn.onEvent(writing('web_fetch', 10));
    await sleep(60);
    expect(off.egress.calls).toEqual([]);
  });

  it('a long streamed answer ends as an edit plus the remaining chunks', async () => {
    const egress = new ChatEgress(200);
    const { turn } = live({ streaming: true, egress });
    turn.onEvent(delta('x'.repeat(50)));
    await sleep(40);
    const answer = Array.from({ length: 12 }, (_, i) => `line ${i} ${'y'.repeat(30)}`).join('\n');
    const ids = await turn.finish(answer);
    expect(ids!.length).toBeGreaterThan(1);
    expect(ids![0]).toBe('1');
    const joined = ids!.map((id) => egress.messages.get(id)).join('\n');
    for (let i = 0; i < 12; i++) expect(joined).toContain(`line ${i} `);
  });

  it('a platform that cannot edit (WhatsApp) gets no streamed reply and no tool progress, whatever the settings say', async () => {
    const egress = new ChatEgress();
    Object.defineProperty(egress, 'editable', { value: false });
    const { turn } = live({ streaming: true, tools: 'all', egress });
    turn.onEvent(delta('hello'));
    await sleep(30);
    expect(await turn.finish('hello')).toBeNull();
    await turn.close();
    expect(egress.calls).toEqual([]);
  });

  it('without streaming, finish leaves delivery to the caller', async () => {
    const { turn, egress } = live();
    turn.onEvent(delta('hello'));
    expect(await turn.finish('hello')).toBeNull();
    expect(egress.calls).toEqual([]);
  });

  it('tool progress: one message edited in place; "new" shows a line when the tool changes, "all" every call', async () => {
    for (const [mode, expected] of [
      ['new', ['⚙️ `search: cats`', '⚙️ `fetch: https://a.example`']],
      ['all', ['⚙️ `search: cats`', '⚙️ `search: dogs`', '⚙️ `fetch: https://a.example`']],
      ['off', []],
    ] as const) {
      const { turn, egress } = live({ tools: mode });
      turn.onEvent(tool('1', 'search', { q: 'cats' }));
      turn.onEvent(tool('2', 'search', { q: 'dogs' }));
      turn.onEvent(tool('3', 'fetch', { url: 'https://a.example' }));
      await sleep(60);
      await turn.finish('answer');
      expect(egress.texts()).toEqual(expected.length ? [expected.join('\n')] : []);
      expect(egress.calls.filter((c) => c.startsWith('send')).length).toBe(expected.length ? 1 : 0);
    }
  });

  it('a stopped turn stops typing and its streamed text says it was stopped', async () => {
    const { turn, egress, controller } = live({ streaming: true });
    turn.startTyping();
    turn.onEvent(delta('partial'));
    await waitFor(() => egress.texts().length === 1, { what: 'the partial text streamed' });
    controller.abort(new TurnAbort('stop'));
    await turn.close();
    const typings = egress.typings;
    await sleep(120);
    expect(egress.typings).toBe(typings);
    expect(egress.texts()).toEqual([`partial${STOPPED_MARK}`]);
  });

  describe('typing', () => {
    afterEach(() => vi.useRealTimers());

    it('shows "typing…" once the turn has run the delay, then refreshes it until the turn stops it', () => {
      vi.useFakeTimers();
      const { turn, egress } = live({ typingDelayMs: 300 });
      turn.startTyping();
      vi.advanceTimersByTime(299);
      expect(egress.typings).toBe(0);
      vi.advanceTimersByTime(1);
      expect(egress.typings).toBe(1);
      // ChatEgress refreshes every 50 ms.
      vi.advanceTimersByTime(100);
      expect(egress.typings).toBe(3);
      turn.stopTyping();
      vi.advanceTimersByTime(1_000);
      expect(egress.typings).toBe(3);
    });

    it('sends no "typing…" at all for a turn that ends within the delay', () => {
      vi.useFakeTimers();
      const { turn, egress } = live({ typingDelayMs: 300 });
      turn.startTyping();
      vi.advanceTimersByTime(200);
      turn.stopTyping();
      vi.advanceTimersByTime(10_000);
      expect(egress.typings).toBe(0);
    });

    it('with no delay shows it at once; a stopped turn never starts it', () => {
      vi.useFakeTimers();
      const { turn, egress } = live({ typingDelayMs: 0 });
      turn.startTyping();
      expect(egress.typings).toBe(1);
      const controller = new AbortController();
      const stopped = live({ typingDelayMs: 300, controller });
      controller.abort(new TurnAbort('stop'));
      stopped.turn.startTyping();
      vi.advanceTimersByTime(1_000);
      expect(stopped.egress.typings).toBe(0);
    });

    it('a turn stopped during the delay sends none', () => {
      vi.useFakeTimers();
      const controller = new AbortController();
      const { turn, egress } = live({ typingDelayMs: 300, controller });
      turn.startTyping();
      controller.abort(new TurnAbort('stop'));
      vi.advanceTimersByTime(1_000);
      expect(egress.typings).toBe(0);
    });
  });

  it("knows the platforms' edit spacing and shortens argument previews", () => {
    expect(editIntervalMs('telegram', 'dm')).toBe(1_100);
    expect(editIntervalMs('telegram', 'group')).toBe(3_000);
    expect(editIntervalMs('slack', 'thread')).toBe(1_000);
    expect(argsPreview({ query: 'a\n  b' })).toBe('a b');
    expect(argsPreview({ n: 3 })).toBe('{"n":3}');
    expect(argsPreview({ q: 'z'.repeat(100) })).toHaveLength(60);
  });
});
