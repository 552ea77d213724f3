/**
 * The session commands against a real store (a temp SQLite file) and real Redis (the mailbox and queue they use),
 * as the router calls them. The end-to-end suite (test/control.e2e.test.ts) covers them with running turns.
 */
import { openApprovalDesk } from '../../features/approvals/desk.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '@herald/adapters';
import { MemoryStore, SessionStore } from '@herald/agent-core';
import { loadConfig } from '../../support/config/load.js';
import { sessionKeyFor } from '../ingress/router.js';
import { ControlBus } from '../../queue/control.js';
import { Mailbox } from '../../queue/mailbox.js';
import { TurnProducer, type TurnJobData } from '../../queue/producer.js';
import { TURN_QUEUE } from '../../queue/worker.js';
import { openConversationServices, type ConversationServices } from '../../features/sessions/services.js';
import { TOO_SHORT_NOTICE } from '../../turn/auto-compress.js';
import type { CommandDeps } from './context.js';
import { CommandLedger } from './ledger.js';
import { withSessionHeld } from '../../features/sessions/session-hold.js';
import { openSchedules, type Schedules } from '../../features/schedules/index.js';
import { scheduleOrigin } from '../../features/schedules/store.js';
import { runCommand } from './handlers.js';
import { ReplicationPendingError } from '../../queue/replica-wait.js';
import { BUSY_REPLY, parseCommand } from './registry.js';
import { NO_TTS_REPLY, VOICE_USAGE } from './voice.js';
import { REASONING_USAGE } from './reasoning.js';
import { REMEMBER_USAGE } from './remember.js';
import { testPrefix } from '../../../../../test/helpers/test-run.js';

const URL = 'redis://127.0.0.1:6379';
const log = pino({ level: 'silent' });
const prefix = testPrefix('commands');
const dir = mkdtempSync(join(tmpdir(), 'herald-commands-'));
let redis: Redis;
let queue: Queue<TurnJobData>;
let store: SessionStore;
let services: ConversationServices;
let deps: CommandDeps;
let schedules: Schedules;
let nextId = 1;

beforeAll(async () => {
  const db = join(dir, 'herald.db');
  const config = loadConfig({
    file: null,
    env: { HERALD_DB: db, HERALD_MODEL: 'openai:gpt-4.1-mini', OPENAI_API_KEY: 'sk-test', HERALD_CONTEXT_WINDOW: '10000' },
  });
  redis = new Redis(URL);
  store = await SessionStore.open(db);
  services = openConversationServices(config, store);
  const mailbox = new Mailbox(redis, prefix, 2_000);
  const control = new ControlBus(redis, null, prefix);
  queue = new Queue<TurnJobData>(TURN_QUEUE, { connection: { url: URL, maxRetriesPerRequest: null }, prefix });
  schedules = openSchedules({ ...config, redisPrefix: prefix }, store, log);
  deps = {
    store,
    mailbox,
    control,
    producer: new TurnProducer(queue, mailbox, control, log),
    ledger: new CommandLedger(redis, prefix),
    conversation: services,
    schedules: schedules.service,
    log,
    profiles: services.profiles,
    approvals: openApprovalDesk(redis, prefix, store.sql),
  };
});

afterAll(async () => {
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await schedules.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function message(chat: string, text: string, platform: InboundMessage['platform'] = 'telegram'): InboundMessage {
  const id = nextId++;
  return {
    platform,
    messageId: `${chat}:${id}`,
    conversationId: `${platform}:${chat}`,
    chatType: 'dm',
    chatId: chat,
    userId: chat,
    text,
    attachments: [],
    platformMessageId: String(id),
    sentAt: Date.now(),
  };
}

async function command(chat: string, text: string, platform: InboundMessage['platform'] = 'telegram'): Promise<string | null> {
  const msg = message(chat, text, platform);
  const parsed = parseCommand(text);
  if (!parsed) throw new Error(`not a command: ${text}`);
  const reply = await runCommand(deps, { command: parsed, msg, sessionKey: sessionKeyFor(msg), profile: services.profiles.get('default') });
  return reply === null || typeof reply === 'string' ? reply : reply.text;
}

/** A session with `exchanges` question/answer pairs written as turns, as the worker writes them. */
async function conversation(chat: string, exchanges: Array<[string, string]>): Promise<string> {
  const key = sessionKeyFor(message(chat, ''));
  const { session } = await store.getOrCreateSession(key, { source: 'telegram', userId: chat, chatId: chat, model: 'openai:gpt-4.1-mini' });
  for (const [i, [q, a]] of exchanges.entries()) {
    await store.appendMessages(
      session.id,
      [
        { role: 'user', content: q },
        { role: 'assistant', content: a },
      ],
      { turnId: `${chat}-t${i}` },
    );
  }
  return session.id;
}

describe('session commands', () => {
  it('/undo removes the last exchange and says what; /undo on nothing says so', async () => {
    const id = await conversation('u1', [
      ['first question', 'first answer'],
      ['second question', 'second answer'],
    ]);
    expect(await command('u1', '/undo')).toBe('↩️ Removed your last message “second question” and the reply.');
    expect((await store.getHistory(id)).map((m) => m.content)).toEqual(['first question', 'first answer']);
    expect(await command('u1', '/undo')).toMatch(/first question/);
    expect(await command('u1', '/undo')).toBe('Nothing to undo.');
  });

  it('/retry removes the last question with its answer and queues the question again', async () => {
    const id = await conversation('r1', [
      ['keep me', 'kept'],
      ['ask again', 'wrong answer'],
    ]);
    expect(await command('r1', '/retry')).toBeNull();
    expect((await store.getHistory(id)).map((m) => m.content)).toEqual(['keep me', 'kept']);
    const pending = await deps.mailbox.head(sessionKeyFor(message('r1', '')));
    expect(pending?.entry.payload.text).toBe('ask again');
  });

  it('/retry whose question a replica did not confirm fails to the hand-over; run again, it removes nothing more and queues once', async () => {
    const id = await conversation('rw1', [
      ['keep me too', 'kept'],
      ['ask once more', 'wrong answer'],
    ]);
    const msg = message('rw1', '/retry');
    const input = { command: parseCommand('/retry')!, msg, sessionKey: sessionKeyFor(msg), profile: services.profiles.get('default') };
    // The first run's append lands on the primary, but its WAIT falls short (the producer's refusal).
    let unconfirmed = true;
    const producer: CommandDeps['producer'] = Object.create(deps.producer);
    producer.submit = async (...args) => {
      const res = await deps.producer.submit(...args);
      if (!unconfirmed) return res;
      unconfirmed = false;
      const err = new ReplicationPendingError('fewer than 1 Redis replica confirmed the message');
      err.appended = true;
      throw err;
    };
    await expect(runCommand({ ...deps, producer }, input)).rejects.toBeInstanceOf(ReplicationPendingError);
    expect((await store.getHistory(id)).map((m) => m.content)).toEqual(['keep me too', 'kept']);
    // The hand-over's retry runs the command again: the question is a duplicate now, and the earlier exchange stays.
    expect(await runCommand({ ...deps, producer }, input)).toBeNull();
    expect((await store.getHistory(id)).map((m) => m.content)).toEqual(['keep me too', 'kept']);
    expect((await deps.mailbox.head(input.sessionKey))?.entry.payload.text).toBe('ask once more');
    expect(await deps.mailbox.length(input.sessionKey)).toBe(1);
  });

  it('a command delivered twice (a redelivery, or a retried hand-over after its answer failed to send) runs once', async () => {
    const id = await conversation('d1', [
      ['one', '1'],
      ['two', '2'],
      ['three', '3'],
    ]);
    const msg = message('d1', '/undo');
    const input = { command: parseCommand('/undo')!, msg, sessionKey: sessionKeyFor(msg), profile: services.profiles.get('default') };
    const first = await runCommand(deps, input);
    expect(first).toMatch(/“three”/);
    // The same platform message again: the same answer, and only one exchange is gone.
    expect(await runCommand(deps, input)).toBe(first);
    expect((await store.getHistory(id)).map((m) => m.content)).toEqual(['one', '1', 'two', '2']);
    // A new /undo message is a new command.
    expect(await command('d1', '/undo')).toMatch(/“two”/);
  });

  it('a transcript rewrite holds the session: a worker cannot start a turn on it meanwhile', async () => {
    await conversation('h1', [['q', 'a']]);
    const key = sessionKeyFor(message('h1', ''));
    let during: Awaited<ReturnType<typeof deps.mailbox.acquire>> | null = null;
    const held = await withSessionHeld(deps.mailbox, key, 'command:test', async () => {
      during = await deps.mailbox.acquire(key, 'a-worker');
      return 'done';
    });
    expect(held).toEqual({ held: true, value: 'done' });
    expect(during).toMatchObject({ heldForMs: expect.any(Number) });
    // Released afterwards.
    const after = await deps.mailbox.acquire(key, 'a-worker');
    expect(after).toMatchObject({ fence: expect.any(Number) });
    if ('token' in after) await deps.mailbox.release(key, after.token);
  });

  it('a rewrite whose lock is lost (broken by /stop) sees its signal abort', async () => {
    const key = sessionKeyFor(message('h2', ''));
    const held = await withSessionHeld(deps.mailbox, key, 'command:test', async (signal) => {
      await deps.mailbox.stop(key); // breaks the lock, as /stop does
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      return signal.aborted;
    });
    expect(held).toEqual({ held: true, value: true });
  });

  it('/retry, /undo, /compress and /resume refuse while a turn holds the session', async () => {
    await conversation('b1', [['q', 'a']]);
    const key = sessionKeyFor(message('b1', ''));
    const lock = await deps.mailbox.acquire(key, 'test-worker');
    if ('heldForMs' in lock) throw new Error('lock unexpectedly held');
    for (const c of ['/retry', '/undo', '/compress', '/resume x']) expect(await command('b1', c)).toBe(BUSY_REPLY);
    expect(await command('b1', '/status')).toContain('A task is running');
    await deps.mailbox.release(key, lock.token);
    expect(await command('b1', '/undo')).toMatch(/^↩️/);
  });

  it('/title names the conversation; a title another conversation has is refused', async () => {
    await conversation('t1', [['plan a trip', 'sure']]);
    expect(await command('t1', '/title')).toMatch(/has no title/);
    expect(await command('t1', '/title  Trip to Rome ')).toBe('🏷 Titled “Trip to Rome”.');
    expect(await command('t1', '/title')).toBe('This conversation is titled “Trip to Rome”.');
    await conversation('t2', [['other', 'thing']]);
    expect(await command('t2', '/title Trip to Rome')).toMatch(/already has that title/);
  });

  it('/resume lists your titled conversations of this platform, one line per lineage, and continues one by name', async () => {
    const key = sessionKeyFor(message('p3', ''));
    const init = { source: 'telegram' as const, userId: 'p3', chatId: 'p3', model: 'openai:gpt-4.1-mini' };
    const rome = (await store.startNewSession(key, init)).id;
    await store.appendMessages(
      rome,
      [
        { role: 'user', content: 'rome question' },
        { role: 'assistant', content: 'rome answer' },
      ],
      { turnId: 'p3-rome' },
    );
    await store.setTitle(rome, 'Rome');
    const paris = (await store.startNewSession(key, { ...init, endPreviousReason: 'session_reset' })).id;
    await store.setTitle(paris, 'Paris');
    // Someone else's titled conversation, and another platform's: neither is listed nor resumable.
    await store.setTitle(await conversation('p1', [['secret question', 'secret answer']]), 'Secret');
    const slackKey = 'agent:main:slack:dm:D1';
    await store.setTitle((await store.getOrCreateSession(slackKey, { source: 'slack', userId: 'p3' })).session.id, 'Slack only');
    const mine = (await store.startNewSession(key, { ...init, endPreviousReason: 'session_reset' })).id;
    await store.appendMessages(
      mine,
      [
        { role: 'user', content: 'unrelated' },
        { role: 'assistant', content: 'yes' },
      ],
      { turnId: 'p3-now' },
    );

    const list = await command('p3', '/resume');
    expect(list).toContain('• Rome');
    expect(list).toContain('• Paris');
    expect(list).not.toContain('Slack only');
    expect(list).not.toContain('Secret');
    expect(await command('p3', '/resume Slack only')).toMatch(/^No conversation titled/);
    expect(await command('p3', '/resume Secret')).toMatch(/^No conversation titled/);

    expect(await command('p3', '/resume rome')).toBe('▶️ Resumed “Rome” (2 messages).');
    const now = (await store.currentSession(key))!;
    expect(now.parentSessionId).toBe(rome);
    expect(now.title).toBe('Rome #2');
    expect((await store.getHistory(now.id)).map((m) => m.content)).toEqual(['rome question', 'rome answer']);
    expect(await store.getSession(mine)).toMatchObject({ endReason: 'resumed' });
    // The lineage shows once, and resolves to its latest session.
    expect((await command('p3', '/resume'))!.match(/• Rome/g)).toHaveLength(1);
    expect(await command('p3', '/resume Rome')).toBe('Already in “Rome #2”.');
  });

  it('/model lists the choices, sets a model per conversation, refuses one that cannot run here', async () => {
    await conversation('m1', [['hi', 'hello']]);
    expect(await command('m1', '/model')).toContain('Model of this conversation: openai:gpt-4.1-mini');
    expect(await command('m1', '/model anthropic:claude-sonnet-4-5')).toMatch(/ANTHROPIC_API_KEY/);
    expect(await command('m1', '/model gpt-4o')).toMatch(/not provider:model/);
    expect(await command('m1', '/model openai:gpt-4o')).toBe('🧠 This conversation now uses openai:gpt-4o.');
    expect((await store.currentSession(sessionKeyFor(message('m1', ''))))!.model).toBe('openai:gpt-4o');
    expect(await command('m1', '/model default')).toBe('🧠 This conversation now uses openai:gpt-4.1-mini.');
  });

  it('/usage shows tokens, API calls, context used of the window, compressions', async () => {
    const id = await conversation('s1', [['q', 'a']]);
    await store.addUsage(id, { input: 1200, output: 300, cacheRead: 100, cacheWrite: 0, lastPromptTokens: 4000, apiCalls: 2 });
    const usage = await command('s1', '/usage');
    expect(usage).toContain('Tokens: in 1,200 · out 300 · cache read 100 · cache write 0');
    expect(usage).toContain('API calls: 2');
    expect(usage).toContain('Context: 4,000 / 10,000 tokens (40%)');
    expect(usage).toContain('Compressions: 0');
    expect(await command('nobody', '/usage')).toMatch(/^No conversation yet/);
  });

  it('/compress needs at least 4 messages; /new ends the session as session_reset', async () => {
    const id = await conversation('c1', [['q', 'a']]);
    expect(await command('c1', '/compress')).toBe(TOO_SHORT_NOTICE);
    expect(await command('c1', '/new')).toMatch(/^✨ Started a new conversation/);
    // The session ends behind the reply, after the memory flush.
    await services.background.settle(10_000);
    expect(services.background.running).toBe(0);
    expect(await store.getSession(id)).toMatchObject({ endReason: 'session_reset' });
    expect(await command('c1', '/stop')).toBe('No active task to stop.');
  });
});

describe('/schedules', () => {
  it("lists the user's tasks (all of them in a DM, this chat's in a group), cancels theirs, and explains bad input", async () => {
    const dm = message('sch1', '');
    const group: InboundMessage = { ...dm, conversationId: 'telegram:-500', chatType: 'group', chatId: '-500' };
    await schedules.service.create({ origin: scheduleOrigin(dm, sessionKeyFor(dm)), prompt: 'water the plants', inMinutes: 60 });
    const inGroup = await schedules.service.create({ origin: scheduleOrigin(group, sessionKeyFor(group)), prompt: 'stand-up notes', cron: '0 9 * * 1-5' });
    const run = (msg: InboundMessage, text: string) =>
      runCommand(deps, {
        command: parseCommand(text)!,
        msg: { ...msg, messageId: `sch-${nextId++}` },
        sessionKey: sessionKeyFor(msg),
        profile: services.profiles.get('default'),
      });

    const all = await run(dm, '/schedules');
    expect(all).toMatch(/^Your scheduled tasks \(2\):\n• /);
    expect(all).toContain('"water the plants"');
    expect(all).toContain('"stand-up notes"');
    const here = await run(group, '/schedules list');
    expect(here).toMatch(/^Your scheduled tasks in this chat \(1\):\n• [a-z2-9]{8} — repeats: cron "0 9 \* \* 1-5"/);
    expect(here).not.toContain('water the plants');
    expect(await run({ ...group, userId: 'someone-else' }, '/schedules')).toBe('You have no scheduled tasks in this chat.');

    expect(await run(group, '/schedules delete everything')).toBe('Usage: /schedules — list your scheduled tasks; /schedules cancel <id> — cancel one.');
    expect(await run(group, '/schedules cancel')).toMatch(/^Usage: /);
    expect(await run({ ...group, userId: 'someone-else' }, `/schedules cancel ${inGroup.id}`)).toBe(
      `You have no scheduled task "${inGroup.id}". Send /schedules to see yours.`,
    );
    expect(await run(group, `/schedules cancel ${inGroup.id}`)).toBe(`🗑 Cancelled scheduled task ${inGroup.id}.`);
    expect(await run(group, `/schedules cancel ${inGroup.id}`)).toBe(`Task ${inGroup.id} has already finished or been cancelled.`);
    expect(await run(group, '/schedules')).toBe('You have no scheduled tasks in this chat.');
  });
});

describe('/voice', () => {
  it('without a text-to-speech model it says so and switches nothing on', async () => {
    expect(await command('v0', '/voice on')).toBe(NO_TTS_REPLY);
    expect(await services.voice.isOn(sessionKeyFor(message('v0', '')))).toBe(false);
  });

  it('with one: on and off per conversation, remembered across /new, a voice note on Telegram, an audio file elsewhere', async () => {
    const withTts = openConversationServices(
      loadConfig({ file: null, env: { HERALD_DB: join(dir, 'herald.db'), HERALD_TTS_MODEL: 'openai:gpt-4o-mini-tts', OPENAI_API_KEY: 'sk-test' } }),
      store,
    );
    const voiceDeps = { ...deps, conversation: withTts };
    const say = (chat: string, text: string, platform: InboundMessage['platform'] = 'telegram') => {
      const msg = message(chat, text, platform);
      return runCommand(voiceDeps, { command: parseCommand(text)!, msg, sessionKey: sessionKeyFor(msg), profile: services.profiles.get('default') });
    };
    expect(await say('v1', '/voice')).toMatch(/^🔇 Voice replies are off/);
    expect(await say('v1', '/voice on')).toMatch(/^🔊 Voice replies on: each answer also comes as a voice note/);
    expect(await say('v2', '/voice on', 'discord')).toMatch(/as an audio file/);
    expect(await say('v1', '/voice loud')).toBe(VOICE_USAGE);
    await say('v1', '/new');
    expect(await withTts.voice.isOn(sessionKeyFor(message('v1', '')))).toBe(true);
    expect(await say('v1', '/voice off')).toBe('🔇 Voice replies off.');
    expect(await withTts.voice.isOn(sessionKeyFor(message('v1', '')))).toBe(false);
    // Another conversation keeps its own choice.
    expect(await withTts.voice.isOn(sessionKeyFor(message('v2', '', 'discord')))).toBe(true);
  });
});

describe('/reasoning', () => {
  it('is off by default; on and off per conversation, remembered across /new', async () => {
    const key = sessionKeyFor(message('r1', ''));
    expect(await command('r1', '/reasoning')).toMatch(/^💭 Reasoning is hidden/);
    expect(await services.reasoning.isOn(key)).toBe(false);
    expect(await command('r1', '/reasoning on')).toMatch(/^💭 Reasoning on/);
    expect(await command('r1', '/reasoning maybe')).toBe(REASONING_USAGE);
    await command('r1', '/new');
    expect(await services.reasoning.isOn(key)).toBe(true);
    expect(await services.reasoning.isOn(sessionKeyFor(message('r2', '')))).toBe(false);
    expect(await command('r1', '/reasoning off')).toBe('💭 Reasoning off.');
    expect(await services.reasoning.isOn(key)).toBe(false);
  });
});

describe('/remember', () => {
  it("saves a note (about the work, or with `user` about the person) to the person's notes; a repeat keeps one copy", async () => {
    expect(await command('m1', '/remember')).toBe(REMEMBER_USAGE);
    expect(await command('m1', '/remember user Prefers green tea')).toBe('💾 Saved (about you): Prefers green tea');
    expect(await command('m1', '/remember user Prefers green tea')).toBe('💾 Saved (about you): Prefers green tea');
    expect(await command('m1', '/remember The repo uses pnpm')).toBe('💾 Saved: The repo uses pnpm');
    expect(await new MemoryStore(store).snapshot('telegram:m1')).toEqual({ memory: ['The repo uses pnpm'], user: ['Prefers green tea'] });
    expect(await command('m1', `/remember user ${'x'.repeat(2_000)}`)).toMatch(/^⚠️ Not saved: /);
  });
});

describe('/personality, /prompt, /skills', () => {
  it('switches a conversation to a new segment with the new prompt and the transcript; /prompt shows its layers', async () => {
    const before = await conversation('pers1', [['hi', 'hello']]);
    expect(await command('pers1', '/personality')).toMatch(/^Personality of this conversation: none\nAvailable: .*pirate.*none/);
    expect(await command('pers1', '/personality nobody')).toBe('No personality "nobody". /personality lists them.');
    expect(await command('pers1', '/personality pirate')).toMatch(/^🎭 Personality: pirate\./);
    const now = await store.currentSession(sessionKeyFor(message('pers1', '')));
    expect(now?.parentSessionId).toBe(before);
    expect((await store.getSession(before))?.endReason).toBe('personality');
    expect(now?.systemPrompt).toMatch(/^You are a cheerful pirate captain/);
    expect((await store.getHistory(now!.id)).map((m) => m.content)).toEqual(['hi', 'hello']);
    expect(await command('pers1', '/personality')).toMatch(/^Personality of this conversation: pirate/);
    expect(await command('pers1', '/prompt')).toMatch(
      /^System prompt of this conversation \(personality pirate\):\n• identity — \d+ chars \(personality pirate\)\n• profile/,
    );
    expect(await command('pers1', '/status')).toContain('Prompt: identity → profile → platform → tools · personality pirate');
  });

  it('a session a command starts (/title before any message) gets the prompt builder’s prompt and its record', async () => {
    await command('pers2', '/title Layered');
    const s = await store.currentSession(sessionKeyFor(message('pers2', '')));
    expect(s?.systemPrompt).toMatch(/# Formatting\nYou are answering in Telegram[\s\S]*# Tools\n[\s\S]*# This conversation\n/);
    expect((await services.prompts.recordOf(s!.id))?.layers.map((l) => l.name)).toEqual(['profile', 'platform', 'tools']);
  });

  it('/skills says how to get skills when the profile has none', async () => {
    expect(await command('skills1', '/skills')).toMatch(/^No skills for profile default: set HERALD_SKILLS_DIR/);
  });
});
