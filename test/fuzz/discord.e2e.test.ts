/**
 * Fuzz, Discord gateway: one real gateway (discord.js inside) connected to the Discord stand-in reads FUZZ_RUNS
 * generated rounds of gateway frames — MESSAGE_CREATE with malformed fields or no object at all, other events
 * with junk payloads, event names Discord never sent, unknown opcodes, frames that are not JSON. After each
 * round the stand-in asks for a heartbeat (opcode 1, as Discord does) and waits for it: the client has read the
 * round, is alive, and kept its session (no reconnect). Only Alice is allowed: every well-formed message comes
 * from a stranger and every message of Alice's has a field of the wrong type, so nothing may reach the LLM until
 * Alice's one valid DM at the end, which must be answered.
 *
 * Not sent: READY and RESUMED (they replace the session itself), and the control opcodes Reconnect (7), Invalid
 * Session (9) and Hello (10), which make any client reconnect by design; @discordjs/ws also reads their `d`
 * without checking it, in a promise nobody awaits.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDiscordFake, type DiscordFake, type FakeUser } from '../fakes/discord/index.js';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { discordEnv, discordRepliesIn, waitForDiscordReady } from '../helpers/discord.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { waitFor } from '../helpers/ports.js';
import { anyJson, corruptOneOf, notJson, oddOrHugeString, oddString, type Json, type JsonObject } from './arbitraries.js';
import { FUZZ_RUNS, FUZZ_SEED, FUZZ_TEST_TIMEOUT_MS, expectSurvived, fuzz, fuzzedGatewayEnv } from './harness.js';

/** A round that the client has not finished reading by then is a hung client. */
const HEARTBEAT_ANSWER_LIMIT_MS = 15_000;
/**
 * The heartbeat interval the stand-in announces in HELLO: 23 days, so the client's own scheduled beat never falls
 * inside the run. The stand-in asks for a beat after every round, and a scheduled beat that found the last one
 * not yet ACKed would make the client drop the connection as a zombie — correctly, but not what is tested here.
 */
const HEARTBEAT_INTERVAL_MS = 2_000_000_000;
const SESSION_EVENTS = ['READY', 'RESUMED'];
const OTHER_EVENTS = [
  'MESSAGE_UPDATE',
  'MESSAGE_DELETE',
  'MESSAGE_DELETE_BULK',
  'MESSAGE_REACTION_ADD',
  'TYPING_START',
  'CHANNEL_CREATE',
  'CHANNEL_UPDATE',
  'CHANNEL_DELETE',
  'THREAD_CREATE',
  'THREAD_UPDATE',
  'THREAD_DELETE',
  'THREAD_LIST_SYNC',
  'THREAD_MEMBERS_UPDATE',
  'GUILD_CREATE',
  'GUILD_UPDATE',
  'GUILD_DELETE',
  'GUILD_MEMBER_ADD',
  'GUILD_MEMBER_UPDATE',
  'GUILD_MEMBERS_CHUNK',
  'GUILD_ROLE_CREATE',
  'PRESENCE_UPDATE',
  'INTERACTION_CREATE',
  'VOICE_STATE_UPDATE',
  'USER_UPDATE',
];
/** Opcodes a client only ever sends, or none at all; 0, 1 and 11 are sent in their own shapes below. */
const UNKNOWN_OPCODES = [2, 3, 4, 5, 6, 8, 12, 13, 42, -1, 2 ** 31];

type Frame = { kind: 'event'; t: string; d: unknown } | { kind: 'raw'; text: string };
interface Round {
  what: string;
  frames: Frame[];
}

/** Random snowflakes: never one of the stand-in's own ids. */
const snowflake = fc.bigInt({ min: 1_000_000_000_000_000_000n, max: 9_223_372_036_854_775_807n }).map(String);
const event = (what: string, t: string, d: unknown): Round => ({ what, frames: [{ kind: 'event', t, d }] });

function userJson(u: FakeUser): JsonObject {
  return { id: u.id, username: u.username, global_name: u.globalName ?? null, discriminator: '0', avatar: null, ...(u.bot && { bot: true }) };
}

/**
 * A DM from Alice as Discord sends it, with every field Herald reads; the test first shows it is taken as it is,
 * so that each corrupted copy is refused because of its corruption.
 */
/** Alice's file: on the stand-in's CDN, so the worker reads it locally (nothing is fetched from the real Discord). */
const NOTES = Buffer.from('twelve bytes');

function aliceMessage(discord: DiscordFake, aliceDm: string, content: string): JsonObject {
  return {
    id: '1200000000000000001',
    type: 0,
    channel_id: aliceDm,
    channel_type: 1,
    author: userJson(discord.fixtures.alice),
    content,
    timestamp: '2025-01-01T00:00:00.000Z',
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [userJson(discord.bot)],
    mention_roles: [],
    attachments: [
      {
        id: '1200000000000000002',
        filename: 'notes.txt',
        size: NOTES.length,
        content_type: 'text/plain',
        url: discord.cdn.put(aliceDm, 'notes.txt', NOTES, 'text/plain'),
      },
    ],
    embeds: [],
    pinned: false,
    flags: 0,
    components: [],
  };
}

/** The rounds of frames, built around the stand-in's fixtures. */
function discordRounds(discord: DiscordFake, aliceDm: string): fc.Arbitrary<Round> {
  const { generalChannelId, guildId, botRoleId } = discord.fixtures;
  const bot = userJson(discord.bot);
  const user = fc.record(
    { id: snowflake, username: oddString, global_name: fc.option(oddString), discriminator: fc.constant('0'), bot: fc.boolean() },
    { requiredKeys: ['id', 'username'] },
  );
  const attachment = fc.record(
    { id: snowflake, filename: oddString, size: fc.nat(), url: oddString, proxy_url: oddString, content_type: oddString },
    { requiredKeys: ['id', 'filename', 'size', 'url'] },
  );

  /** A well-formed message from a stranger: in the general channel (mention or not) or a DM Herald never saw. */
  const strangerMessage = fc
    .record(
      {
        id: snowflake,
        channel_id: fc.oneof(fc.constant(generalChannelId), snowflake),
        author: user,
        content: oddOrHugeString,
        type: fc.constantFrom(0, 19, 7, 18, 21, 999),
        mentions: fc.array(fc.oneof(fc.constant(bot), user), { maxLength: 3 }),
        mention_roles: fc.array(fc.oneof(fc.constant(botRoleId), snowflake), { maxLength: 2 }),
        attachments: fc.array(attachment, { maxLength: 2 }),
        timestamp: fc.constant('2025-01-01T00:00:00.000Z'),
        message_reference: fc.record({ message_id: snowflake, channel_id: snowflake }),
        referenced_message: fc.dictionary(fc.constantFrom('id', 'author', 'content', 'channel_id'), anyJson, { maxKeys: 4 }),
        member: fc.record({ nick: oddString, roles: fc.array(snowflake, { maxLength: 2 }) }),
        webhook_id: snowflake,
        channel_type: fc.constantFrom(0, 1, 2, 5, 11, 12, 15, 99),
      },
      { requiredKeys: ['id', 'channel_id', 'author', 'content', 'type', 'mentions', 'attachments'] },
    )
    .map((m) => event("a stranger's message", 'MESSAGE_CREATE', m.channel_id === generalChannelId ? { ...m, guild_id: guildId } : m));

  /** Alice's DM with one field Herald reads (through discord.js) of the wrong type. */
  const corruptedAliceMessage = fc
    .tuple(
      snowflake,
      corruptOneOf(aliceMessage(discord, aliceDm, 'hello from alice'), [
        ['id'],
        ['channel_id'],
        ['author'],
        ['author', 'id'],
        ['content'],
        ['type'],
        ['mentions', 0, 'id'],
        ['attachments', 0, 'url'],
        ['attachments', 0, 'size'],
      ]),
    )
    .map(([id, { value, path }]) => {
      const d = path[0] === 'id' ? value : { ...(value as JsonObject), id };
      return event(`Alice's DM with a wrong ${path.join('.')}`, 'MESSAGE_CREATE', d);
    });

  const messageKeys = fc.constantFrom(
    'id',
    'channel_id',
    'author',
    'content',
    'type',
    'mentions',
    'attachments',
    'guild_id',
    'member',
    'referenced_message',
    'thread',
    'message_reference',
    'channel_type',
    'webhook_id',
    'embeds',
    'components',
    'poll',
  );
  const junkMessageCreate = fc
    .oneof(anyJson, fc.dictionary(messageKeys, anyJson, { maxKeys: 8 }))
    .map((d) => event('MESSAGE_CREATE of junk', 'MESSAGE_CREATE', d));

  const idKeys = fc.constantFrom('id', 'guild_id', 'channel_id', 'parent_id', 'user_id', 'message_id', 'owner_id');
  const otherEvent = fc
    .tuple(fc.constantFrom(...OTHER_EVENTS), fc.dictionary(idKeys, snowflake, { maxKeys: 3 }), fc.dictionary(oddString, anyJson, { maxKeys: 4 }), fc.boolean())
    .map(([t, ids, junk, asObject]) => event(`${t} of junk`, t, asObject ? { ...junk, ...ids } : junk));

  const unknownEvent = fc
    .tuple(fc.oneof(oddString, fc.constantFrom('error', '__proto__', 'constructor', 'toString', 'message_create')), anyJson)
    .filter(([t]) => !SESSION_EVENTS.includes(t))
    .map(([t, d]) => event(`event named ${JSON.stringify(t)}`, t, d));

  const raw = (what: string, text: string): Round => ({ what, frames: [{ kind: 'raw', text }] });
  const rawFrame = fc.oneof(
    notJson.map((body) => raw('a frame that is not JSON', typeof body === 'string' ? body : Buffer.from(body).toString('latin1'))),
    anyJson.map((v) => raw('a JSON frame of any shape', JSON.stringify(v))),
    fc
      .tuple(fc.oneof(fc.constantFrom(...UNKNOWN_OPCODES), oddString, fc.constant(null), fc.constant(0.5)), anyJson)
      .map(([op, d]) => raw(`opcode ${JSON.stringify(op)}`, JSON.stringify({ op, d, s: null, t: null }))),
    anyJson.map((d) => raw('a heartbeat ACK with junk', JSON.stringify({ op: 11, d }))),
    fc
      .tuple(fc.oneof(oddString, fc.constant(null), fc.integer()), fc.constantFrom<Json>(null, 'x', -1, 0.5), anyJson)
      .filter(([t]) => !SESSION_EVENTS.includes(String(t)))
      .map(([t, s, d]) => raw('a dispatch with a junk sequence number', JSON.stringify({ op: 0, t, s, d }))),
  );

  const single = fc.oneof(
    { arbitrary: strangerMessage, weight: 30 },
    { arbitrary: corruptedAliceMessage, weight: 25 },
    { arbitrary: junkMessageCreate, weight: 10 },
    { arbitrary: otherEvent, weight: 15 },
    { arbitrary: unknownEvent, weight: 5 },
    { arbitrary: rawFrame, weight: 15 },
  );
  // Mostly one frame per round; now and then a few in a row, as a busy gateway sends them.
  return fc
    .array(single, { minLength: 1, maxLength: 3 })
    .map((rounds) => ({ what: rounds.map((r) => r.what).join(', then '), frames: rounds.flatMap((r) => r.frames) }));
}

describe(`fuzz: Discord gateway frames (${FUZZ_RUNS} rounds, seed ${FUZZ_SEED})`, () => {
  let discord: DiscordFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    discord = await startDiscordFake({ heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS });
    llm = await startFakeOpenAI();
    const env = discordEnv(discord, llm);
    delete env.GATEWAY_ALLOW_ALL_USERS;
    gw = await startGateway({ env: { ...env, ...fuzzedGatewayEnv(), DISCORD_ALLOWED_USERS: discord.fixtures.alice.id } });
    await waitForDiscordReady(gw);
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await discord?.close();
  });

  it(
    'reads every frame without a crash, an unhandled rejection or a reconnect, keeps memory flat, lets nothing through to the LLM, and still answers Alice',
    async () => {
      const { alice } = discord.fixtures;
      const aliceDm = discord.openDm(alice);
      discord.dispatchRaw('MESSAGE_CREATE', { ...aliceMessage(discord, aliceDm, 'the control'), id: '1200000000000000003' });
      await waitFor(() => discordRepliesIn(discord, aliceDm).length === 1, { timeoutMs: 20_000, what: 'the answer to the uncorrupted control DM' });
      const control = llm.requests.map(lastUserText);
      expect(control).toEqual(['the control\n[Document "notes.txt"]\ntwelve bytes\n[End of "notes.txt"]']);

      const sessions = { identify: discord.identifyCount, resume: discord.resumeCount };
      const run = await fuzz('discord', gw, discordRounds(discord, aliceDm), async (round) => {
        for (const frame of round.frames) {
          if (frame.kind === 'event') discord.dispatchRaw(frame.t, frame.d);
          else discord.sendRaw(frame.text);
        }
        let timer: NodeJS.Timeout | undefined;
        const hung = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${round.what}: no heartbeat within ${HEARTBEAT_ANSWER_LIMIT_MS} ms`)), HEARTBEAT_ANSWER_LIMIT_MS);
        });
        try {
          await Promise.race([discord.requestHeartbeat(), hung]);
        } finally {
          clearTimeout(timer);
        }
        if (discord.identifyCount !== sessions.identify || discord.resumeCount !== sessions.resume) throw new Error(`${round.what}: the client reconnected`);
      });
      await expectSurvived(gw, run);
      expect(discord.liveConnections).toBe(1);
      expect(llm.requests.map(lastUserText), 'no LLM request for a fuzz frame').toEqual(control);

      discord.postUserMessage({ channelId: aliceDm, author: alice, content: 'fuzzing is over' });
      await waitFor(() => discordRepliesIn(discord, aliceDm).length === 2, { timeoutMs: 20_000, what: "the answer to Alice's valid DM" });
      expect(discordRepliesIn(discord, aliceDm)[1]).toBe('ok: fuzzing is over');
      expect(llm.requests.map(lastUserText)).toEqual([...control, 'fuzzing is over']);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
