/**
 * Fuzz, Matrix /sync: the gateway pulls its events, so the fuzzed input is what the homeserver answers. One real
 * gateway long-polls the Matrix stand-in, which answers FUZZ_RUNS of its /sync calls with generated bodies: rooms
 * and events of every shape (odd ids, senders, contents of each msgtype, relations, mentions, media URLs, state of
 * any type in rooms that are not PROBE's), invites, left rooms, account data, and odd-but-legal envelopes. Each body
 * carries a valid `next_batch` (or none, or one of the wrong type): after a legal body the gateway must come back
 * with exactly that token (it took the batch, it did not fail on it), and never with one it made up. Each valid
 * token is one no earlier answer carried, so a batch the gateway failed on and asked for again cannot pass. Only
 * PROBE is allowed, and every PROBE event in the fuzz lacks a field Herald needs, so nothing reaches the LLM until
 * PROBE's one valid message at the end, which must be answered. A second test answers /sync with bodies that are not a sync
 * at all (not JSON, not an object, 4xx/5xx): the gateway retries and takes the next good answer.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { type MatrixFake, startMatrixFake, textContent } from '../fakes/matrix/index.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { matrixEnv } from '../helpers/matrix.js';
import { anyJson, corruptOneOf, deeplyNestedJson, notJson, oddOrHugeString, oddString, type Json, type JsonObject } from './arbitraries.js';
import { FUZZ_RUNS, FUZZ_SEED, FUZZ_TEST_TIMEOUT_MS, expectNoErrorStacks, expectSurvived, fuzz, fuzzedGatewayEnv } from './harness.js';

const PROBE = '@probe:localhost';
const STRANGERS = Array.from({ length: 20 }, (_, i) => `@stranger${i}:localhost`);
/** How long the gateway may take to come back for the next /sync (a hang, not a speed check). */
const NEXT_SYNC_MS = 60_000;
const GARBAGE_CASES = 12;
/**
 * Each payload is a whole /sync round trip of the gateway (take the batch, save the position, poll again), not
 * one POST: 10,000 take about 18 s alone on an idle 2-core machine; the deadline, for a hung run, leaves room for a
 * loaded one (they took 431 s under a load average of 17 while odd room ids still cost a second's backoff each).
 */
const TEST_TIMEOUT_MS = Math.max(FUZZ_TEST_TIMEOUT_MS, FUZZ_RUNS * 90);

let hs: MatrixFake;
let dm = '';

const roomIdArb = fc.oneof(fc.stringMatching(/^![A-Za-z0-9]{4,18}:localhost$/), fc.stringMatching(/^![A-Za-z0-9]{4,18}:[a-z.]{1,12}$/), oddString);
/** Any room but PROBE's one-to-one room, whose state the fuzz must not change (it would stop being direct). */
const otherRoomId = roomIdArb.filter((id) => id !== dm);
const eventIdArb = fc.oneof({ arbitrary: fc.stringMatching(/^\$[A-Za-z0-9_-]{10,43}$/), weight: 4 }, { arbitrary: oddString, weight: 1 });
const mxcArb = fc.oneof(
  fc.stringMatching(/^mxc:\/\/localhost\/[A-Za-z0-9]{4,24}$/),
  fc.stringMatching(/^mxc:\/\/[a-z.:0-9]{1,20}\/[A-Za-z0-9_-]{1,30}$/),
  oddString,
);

const relation: fc.Arbitrary<Json> = fc.oneof(
  eventIdArb.map((id) => ({ 'm.in_reply_to': { event_id: id } })),
  fc
    .tuple(eventIdArb, fc.boolean())
    .map(([id, falling]) => ({ rel_type: 'm.thread', event_id: id, is_falling_back: falling, 'm.in_reply_to': { event_id: id } })),
  eventIdArb.map((id) => ({ rel_type: 'm.replace', event_id: id })),
  fc.tuple(eventIdArb, oddString).map(([id, key]) => ({ rel_type: 'm.annotation', event_id: id, key })),
  anyJson,
);

/** A message content of any msgtype, each field present or not, odd or of the wrong type now and then. */
const content: fc.Arbitrary<JsonObject> = fc.record(
  {
    msgtype: fc.oneof(
      fc.constantFrom('m.text', 'm.notice', 'm.emote', 'm.image', 'm.audio', 'm.video', 'm.file', 'm.location', 'm.key.verification.request'),
      oddString,
    ),
    body: fc.oneof({ arbitrary: oddOrHugeString, weight: 6 }, { arbitrary: anyJson, weight: 1 }),
    format: fc.oneof(fc.constant('org.matrix.custom.html'), oddString),
    formatted_body: oddOrHugeString,
    url: fc.oneof(mxcArb, anyJson),
    filename: oddString,
    info: fc.oneof(fc.record({ mimetype: oddString, size: fc.oneof(fc.integer(), anyJson), duration: anyJson }, { requiredKeys: [] }), anyJson),
    'm.relates_to': relation,
    'm.mentions': fc.oneof(
      fc.record(
        { user_ids: fc.oneof(fc.constant(['@herald:localhost']), fc.array(oddString, { maxLength: 3 }), anyJson), room: fc.boolean() },
        { requiredKeys: [] },
      ),
      anyJson,
    ),
    'm.new_content': fc.oneof(fc.record({ msgtype: fc.constant('m.text'), body: oddString }), anyJson),
  },
  { requiredKeys: [] },
) as fc.Arbitrary<JsonObject>;

const senderArb = fc.oneof(
  { arbitrary: fc.constantFrom(...STRANGERS), weight: 6 },
  { arbitrary: fc.constant('@herald:localhost'), weight: 1 },
  { arbitrary: oddString, weight: 1 },
);

/** A timeline event from anyone but PROBE: a message, a reaction, an encrypted event, a redaction, or anything. */
const strangerEvent = (types: fc.Arbitrary<string>): fc.Arbitrary<Json> =>
  fc.oneof(
    {
      arbitrary: fc.record(
        { type: types, sender: senderArb, event_id: eventIdArb, origin_server_ts: fc.oneof(fc.nat(), anyJson), content },
        { requiredKeys: ['type'] },
      ),
      weight: 8,
    },
    { arbitrary: anyJson, weight: 1 },
  );

const messageTypes = fc.constantFrom('m.room.message', 'm.reaction', 'm.sticker', 'm.room.redaction');
const anyTypes = fc.oneof(
  fc.constantFrom('m.room.message', 'm.room.encrypted', 'm.room.member', 'm.room.encryption', 'm.room.create', 'm.reaction'),
  oddString,
);

/** PROBE's text with one field Herald needs of the wrong type: never answered. */
const probeEvent = (): Json => ({
  type: 'm.room.message',
  sender: PROBE,
  event_id: '$probeeventAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  origin_server_ts: Date.now(),
  content: { msgtype: 'm.text', body: 'hello from the probe' },
});
const corruptedProbe: fc.Arbitrary<Json> = fc
  .constant(null)
  .chain(() => corruptOneOf(probeEvent(), [['type'], ['sender'], ['event_id'], ['content'], ['content', 'body']]).map(({ value }) => value));

const stateEvent: fc.Arbitrary<Json> = fc.oneof(
  fc.record({
    type: anyTypes,
    state_key: fc.oneof(fc.constant(''), fc.constant('@herald:localhost'), oddString),
    sender: senderArb,
    event_id: eventIdArb,
    content: anyJson,
  }),
  anyJson,
);

/**
 * PROBE's room: message events only (strangers', the bot's own, PROBE's broken ones) in its timeline. Few a
 * batch: each stranger's message goes the whole unauthorised-DM way (pairing, Redis), some 20-40 ms here.
 */
const dmEntry: fc.Arbitrary<Json> = fc
  .array(fc.oneof({ arbitrary: strangerEvent(messageTypes), weight: 3 }, { arbitrary: corruptedProbe, weight: 2 }), { maxLength: 3 })
  .map((events) => ({ timeline: { events, limited: false } }));

/** Any other joined room: any events, any state, any summary, fields of the wrong type. */
const otherEntry: fc.Arbitrary<Json> = fc.oneof(
  fc.record(
    {
      timeline: fc.oneof(
        fc.record(
          { events: fc.oneof(fc.array(strangerEvent(anyTypes), { maxLength: 6 }), anyJson), limited: anyJson, prev_batch: anyJson },
          { requiredKeys: [] },
        ),
        anyJson,
      ),
      state: fc.oneof(fc.record({ events: fc.array(stateEvent, { maxLength: 4 }) }), anyJson),
      summary: fc.oneof(fc.record({ 'm.joined_member_count': anyJson, 'm.heroes': anyJson }, { requiredKeys: [] }), anyJson),
      ephemeral: anyJson,
      account_data: anyJson,
    },
    { requiredKeys: [] },
  ),
  anyJson,
);

/** An invite: from a stranger, from PROBE to a room that is not there, or of any shape. */
const inviteEntry: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(...STRANGERS, PROBE, '').map((sender) => ({
    invite_state: { events: [{ type: 'm.room.member', state_key: '@herald:localhost', sender, content: { membership: 'invite' } }] },
  })),
  fc.record({ invite_state: fc.oneof(fc.record({ events: fc.array(stateEvent, { maxLength: 3 }) }), anyJson) }, { requiredKeys: [] }),
  anyJson,
);

const dictOf = (key: fc.Arbitrary<string>, value: fc.Arbitrary<Json>): fc.Arbitrary<Json> => fc.dictionary(key, value, { maxKeys: 3 });

/** A /sync body in the shape of one, with a valid, missing or wrongly typed next_batch. */
const syncBody: fc.Arbitrary<{ body: JsonObject; tokenValid: boolean }> = fc
  .record(
    {
      next_batch: fc.oneof({ arbitrary: fc.constant('valid'), weight: 8 }, { arbitrary: fc.constantFrom(undefined, '', null, 7, [], {}), weight: 1 }),
      join: fc.oneof(
        { arbitrary: fc.tuple(dmEntry, dictOf(otherRoomId, otherEntry)).map(([d, others]) => ({ ...(others as JsonObject), [dm]: d })), weight: 4 },
        { arbitrary: dictOf(otherRoomId, otherEntry), weight: 3 },
        { arbitrary: anyJson, weight: 1 },
      ),
      invite: fc.oneof(dictOf(otherRoomId, inviteEntry), anyJson),
      leave: fc.oneof(dictOf(otherRoomId, anyJson), anyJson),
      roomsShape: fc.constantFrom('object', 'object', 'object', 'odd'),
      odd: anyJson,
      account_data: fc.oneof(fc.record({ events: fc.array(anyJson, { maxLength: 3 }) }), anyJson),
      presence: anyJson,
      to_device: anyJson,
    },
    { requiredKeys: ['next_batch', 'join', 'roomsShape'] },
  )
  .map((r) => {
    const body: JsonObject = {};
    // A token of its own, so a batch the gateway failed on and asked for again shows as the earlier token.
    if (r.next_batch === 'valid') body.next_batch = hs.freshSyncToken();
    else if (r.next_batch !== undefined) body.next_batch = r.next_batch as Json;
    const rooms: JsonObject = { join: r.join };
    if (r.invite !== undefined) rooms.invite = r.invite;
    if (r.leave !== undefined) rooms.leave = r.leave;
    body.rooms = r.roomsShape === 'object' ? rooms : (r.odd ?? null);
    for (const k of ['account_data', 'presence', 'to_device'] as const) if (r[k] !== undefined) body[k] = r[k] as Json;
    return { body, tokenValid: r.next_batch === 'valid' };
  });

/** Answers that are not a sync: the gateway must retry (its backoff) and take the next good one. */
const notASync: fc.Arbitrary<{ raw: string; status: number }> = fc.oneof(
  notJson.map((b) => ({ raw: typeof b === 'string' ? b : Buffer.from(b).toString('latin1'), status: 200 })),
  fc.oneof(fc.array(anyJson, { maxLength: 3 }), fc.constantFrom(null, 1, 'sync', true)).map((v) => ({ raw: JSON.stringify(v), status: 200 })),
  deeplyNestedJson.map((raw) => ({ raw, status: 200 })),
  fc
    .tuple(
      fc.constantFrom(400, 403, 404, 429, 500, 502, 503),
      fc.oneof(
        anyJson.map((v) => JSON.stringify(v)),
        oddString,
      ),
    )
    .map(([status, raw]) => ({ raw, status })),
);

/** Queues one answer and resolves with the /sync the gateway makes after it: it is done with that answer. */
async function answerOnce(raw: unknown, status = 200): Promise<{ since?: string }> {
  const n = hs.rawSyncsServed + 1;
  hs.nextSyncBody(raw, status);
  const next = await hs.waitFor(() => hs.syncAfterRaw(n), NEXT_SYNC_MS, `the gateway's /sync after answer ${n}`);
  return { since: next.query.since };
}

describe(`fuzz: Matrix /sync answers (${FUZZ_RUNS} payloads, seed ${FUZZ_SEED})`, () => {
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    hs = await startMatrixFake();
    dm = hs.createRoom({ members: [PROBE], isDirect: true });
    llm = await startFakeOpenAI();
    llm.respondWith((req) => ({ text: `re: ${lastUserText(req)}` }));
    const env = matrixEnv(hs, llm);
    delete env.GATEWAY_ALLOW_ALL_USERS;
    gw = await startGateway({ env: { ...env, ...fuzzedGatewayEnv(), MATRIX_ALLOWED_USERS: PROBE } });
    // Long-polling with a position: the first (position-taking) sync is behind it.
    await hs.waitFor(() => hs.requestsTo('/sync').some((r) => r.query.since !== undefined), 60_000, 'the gateway to long-poll /sync');
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await hs?.close();
  });

  const answered = (text: string) => () => hs.shown(dm).find((m) => m.body === `re: ${text}`);

  it(
    'takes every sync-shaped answer (next_batch adopted), stays up, lets nothing through to the LLM, and still answers PROBE',
    async () => {
      hs.send(dm, PROBE, textContent('hello from the probe'));
      await hs.waitFor(answered('hello from the probe'), 30_000, 'the answer to the control message');

      const run = await fuzz('matrix', gw, syncBody, async ({ body, tokenValid }) => {
        const { since } = await answerOnce(body);
        if (since === undefined || !/^s\d+_/.test(since)) throw new Error(`the next /sync came with since=${String(since)}: not a token the server gave`);
        if (tokenValid && since !== body.next_batch)
          throw new Error(`the batch was not taken: the next /sync asked since=${since}, not ${String(body.next_batch)}`);
      });
      await expectSurvived(gw, run);
      if (process.env.MX_PROFILE) {
        const c: Record<string, number> = {};
        for (const r of hs.requests) {
          const k = `${r.method} ${r.path.replace(/![^/]*|\$[^/]*|@[^/]*/g, 'X').replace(/\/m\.[^/]*|\/[0-9]+$/g, '/Y')} ${r.status}`;
          c[k] = (c[k] ?? 0) + 1;
        }
        console.log(JSON.stringify(c, null, 1));
      }
      expectNoErrorStacks(gw);
      expect((await fetch(`${gw.url}/health/detailed`)).status).toBeLessThan(500);
      expect(llm.requests.map(lastUserText), 'no LLM request for a fuzz payload').toEqual(['hello from the probe']);

      hs.send(dm, PROBE, textContent('fuzzing is over'));
      await hs.waitFor(answered('fuzzing is over'), 30_000, "the answer to PROBE's valid message");
      expect(llm.requests.map(lastUserText)).toEqual(['hello from the probe', 'fuzzing is over']);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'retries after answers that are not a sync (not JSON, not an object, 4xx, 5xx) and takes the next good one',
    async () => {
      // Each bad answer costs one retry backoff (about a second): a fixed, small number of them.
      for (const bad of fc.sample(notASync, { numRuns: GARBAGE_CASES, seed: FUZZ_SEED })) {
        const { since } = await answerOnce(bad.raw, bad.status);
        expect(since, `after ${bad.status} ${bad.raw.slice(0, 80)}`).toMatch(/^s\d+_/);
        // A good answer next: the retry takes it (and the backoff starts from the beginning again).
        const token = hs.freshSyncToken();
        expect((await answerOnce({ next_batch: token })).since).toBe(token);
      }
      expect(gw.proc.exitCode).toBeNull();
      expectNoErrorStacks(gw);
      hs.send(dm, PROBE, textContent('after the garbage'));
      await hs.waitFor(answered('after the garbage'), 30_000, "the answer to PROBE's message after the garbage");
    },
    TEST_TIMEOUT_MS,
  );

  it('a batch naming rooms by ids no server makes (half a surrogate pair) is taken at once, and the rest of it answered', async () => {
    const odd = '!half\ud800pair:localhost';
    const text = 'next to the odd room ids';
    const failures = (): number => gw.output.filter((l) => l.includes('matrix: sync failed; trying again')).length;
    const failed = failures();
    const token = hs.freshSyncToken();
    const event = {
      type: 'm.room.message',
      event_id: '$oddRoomIdsBatch',
      sender: PROBE,
      origin_server_ts: Date.now(),
      content: { msgtype: 'm.text', body: text },
    };
    const { since } = await answerOnce({
      next_batch: token,
      rooms: {
        invite: {
          [odd]: { invite_state: { events: [{ type: 'm.room.member', state_key: '@herald:localhost', sender: PROBE, content: { membership: 'invite' } }] } },
        },
        join: { [odd]: { timeline: { events: [{ ...event, event_id: '$inTheOddRoom' }] } }, [dm]: { timeline: { events: [event] } } },
      },
    });
    // Taken the first time: a batch the gateway failed on is asked for again a second later with the earlier token.
    expect(since).toBe(token);
    await hs.waitFor(answered(text), 30_000, "the answer to PROBE's message in the batch");
    await gw.waitForLog((l) => l.msg === 'matrix: invite to a room id that is not one; ignored', 'the ignored invite');
    expect(failures()).toBe(failed);
    expect(
      hs.requests.filter((r) => r.path.includes('half')),
      'no request names the odd room',
    ).toEqual([]);
  });
});
