/**
 * Fuzz, Telegram webhook: one real gateway in webhook mode takes FUZZ_RUNS generated POSTs with the right secret
 * header — JSON of any shape, updates whose fields have the wrong types, odd and huge strings, deep nesting, bytes
 * that are not JSON, foreign content types. Well-formed updates it takes or ignores get 200, malformed bodies a
 * 4xx; never a 5xx or a dropped connection. Only one user is allowed (PROBE): every well-formed message comes
 * from someone else, and every message of PROBE's is malformed, so nothing may reach the LLM until PROBE's one
 * valid message at the end, which must be answered.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { startTelegramFake, type TelegramFake } from '../fakes/telegram/index.js';
import { repliesIn, telegramEnv } from '../helpers/env.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { freePort, waitFor } from '../helpers/ports.js';
import { TELEGRAM_SECRET_HEADER } from '../helpers/telegram.js';
import {
  anyJson,
  corruptOneOf,
  deeplyNestedJson,
  foreignContentType,
  notJson,
  oddOrHugeString,
  oddString,
  jsonBody,
  requestInit,
  setPath,
  type Json,
  type JsonObject,
  type JsonPath,
} from './arbitraries.js';
import {
  FUZZ_RUNS,
  FUZZ_SEED,
  FUZZ_TEST_TIMEOUT_MS,
  expectNoErrorStacks,
  expectSurvived,
  fuzz,
  fuzzedGatewayEnv,
  hasStackTrace,
  oversizeStatus,
  statusOk,
  type HttpCase,
} from './harness.js';

const SECRET = 'fuzz_webhook-secret';
const PROBE = 4242;
/** Strangers DM the bot from these chats; the stand-in knows them, so the pairing answer can be delivered. */
const STRANGERS = Array.from({ length: 40 }, (_, i) => 700_001 + i);
/** The gateway's body limit (apps/gateway/src/edges/admin/server.ts). */
const BODY_LIMIT = 1024 * 1024;

type Case = HttpCase;

/**
 * A message of PROBE's in their DM with every field the adapter reads (telegram/wire.ts) present and well-typed,
 * and no other field: whichever one a payload corrupts, the adapter reads it.
 */
function probeUpdate(): JsonObject {
  const user = { id: PROBE, is_bot: false, first_name: 'Probe', last_name: 'Person', username: 'probe' };
  const chat = { id: PROBE, type: 'private', title: 'Probe', username: 'probe', is_forum: false };
  const file = (id: string): JsonObject => ({ file_id: id, file_unique_id: `u-${id}`, file_size: 1234, mime_type: 'application/pdf', file_name: `${id}.pdf` });
  return {
    update_id: 1,
    message: {
      message_id: 7,
      date: 1_700_000_000,
      chat,
      from: user,
      message_thread_id: 5,
      is_topic_message: false,
      text: 'hello from the probe',
      entities: [{ type: 'text_mention', offset: 0, length: 5, user }],
      caption: 'a caption',
      caption_entities: [{ type: 'bold', offset: 0, length: 1 }],
      reply_to_message: { message_id: 6, date: 1_700_000_000, chat, from: user, text: 'earlier', forum_topic_created: { name: 'topic' } },
      quote: { text: 'earl' },
      photo: [file('photo-small'), file('photo-big')],
      document: file('doc'),
      voice: file('voice'),
      audio: file('audio'),
      video: file('video'),
      video_note: file('note'),
      animation: file('gif'),
      forum_topic_created: { name: 'topic' },
    },
  };
}

/** The path of every field in a JSON value, nested ones included. */
function fieldPaths(value: Json, path: JsonPath = []): JsonPath[] {
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const p = [...path, Array.isArray(value) ? Number(key) : key];
    return [p, ...fieldPaths(child, p)];
  });
}

const PROBE_UPDATE = probeUpdate();

const updateId = fc.integer({ min: 1, max: 2 ** 31 });
const strangerUser = fc.record(
  { id: fc.constantFrom(...STRANGERS), is_bot: fc.boolean(), first_name: oddString, last_name: oddString, username: oddString },
  { requiredKeys: ['id'] },
);
const entity = fc.record(
  {
    type: fc.constantFrom('mention', 'bot_command', 'text_mention', 'bold', 'url', 'hashtag', 'pre', 'unknown_kind'),
    offset: fc.integer({ min: -5, max: 200_000 }),
    length: fc.integer({ min: -5, max: 200_000 }),
    user: fc.record({ id: fc.integer({ min: 1, max: 2 ** 40 }), first_name: oddString }),
  },
  { requiredKeys: ['type', 'offset', 'length'] },
);
const file = fc.record(
  { file_id: oddString, file_unique_id: oddString, file_size: fc.nat(), mime_type: oddString, file_name: oddString },
  { requiredKeys: ['file_id'] },
);
/** Groups and supergroups (forums too), channels, and chat types Telegram may add one day. */
const groupChat = fc.record(
  {
    id: fc.integer({ min: -(2 ** 52), max: -1 }),
    type: fc.constantFrom('group', 'supergroup', 'channel', 'business', ''),
    title: oddString,
    is_forum: fc.boolean(),
  },
  { requiredKeys: ['id', 'type'] },
);

/**
 * A well-formed message from a stranger, with odd text, entities, topics, replies and files: it goes all the way
 * through normalisation to the authorisation check, which answers with a pairing code (DM) or silence (group).
 */
const strangerMessage: fc.Arbitrary<Case> = fc
  .tuple(
    updateId,
    strangerUser,
    fc.option(groupChat, { nil: undefined }),
    fc.record(
      {
        text: oddOrHugeString,
        entities: fc.array(entity, { maxLength: 4 }),
        caption: oddString,
        caption_entities: fc.array(entity, { maxLength: 2 }),
        message_thread_id: fc.integer({ min: 1, max: 2 ** 31 }),
        is_topic_message: fc.boolean(),
        quote: fc.record({ text: oddString }),
        photo: fc.array(file, { maxLength: 3 }),
        document: file,
        voice: file,
      },
      { requiredKeys: [] },
    ),
  )
  .map(([id, from, group, fields]) => {
    const chat = group ?? { id: from.id, type: 'private', first_name: 'Stranger' };
    // Telegram numbers a chat's messages from 1: 0 is not a message id (refused with a 400, wire.ts).
    const message = { message_id: (id % 99_999) + 1, date: 1_700_000_000, chat, from, ...fields };
    return { kind: 'stranger message', raw: jsonBody({ update_id: id, message }), expected: [200] };
  });

/** PROBE's message with one field of the wrong type: refused (400), and never a turn. */
const corruptedProbeMessage: fc.Arbitrary<Case> = fc.tuple(updateId, corruptOneOf(PROBE_UPDATE, fieldPaths(PROBE_UPDATE))).map(([id, { value, path }]) => {
  const update = path[0] === 'update_id' ? value : { ...(value as JsonObject), update_id: id };
  return { kind: `probe message with a wrong ${path.join('.')}`, raw: jsonBody(update), expected: [400] };
});

/** Update kinds Herald does not subscribe to, and callback queries it cannot read, carrying anything: ignored (200). */
const otherUpdateKind: fc.Arbitrary<Case> = fc
  .tuple(
    updateId,
    fc.oneof(fc.constantFrom('edited_message', 'channel_post', 'callback_query', 'my_chat_member', 'message_reaction', 'poll'), oddString),
    anyJson,
  )
  .filter(([, kind]) => kind !== 'message' && kind !== 'update_id' && kind !== '__proto__' && kind !== 'constructor')
  .map(([id, kind, value]) => ({ kind: `${kind} update`, raw: jsonBody({ update_id: id, [kind]: value }), expected: [200] }));

/** Values no id field may carry: 0, negative, huge, non-integer, wrong type; `undefined` (missing) where one is required. */
const NOT_AN_ID: Json[] = [0, 0.5, -1.5, 2 ** 53, 2 ** 60, 1e21, -1e300, '1', '', 'abc', null, true, [], [1], {}];
const nonIntegers = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isSafeInteger(n));
const badPositiveId = fc.oneof(fc.constantFrom<Json>(...NOT_AN_ID, -1, -3), fc.integer({ min: -(2 ** 52), max: 0 }), nonIntegers);
/** Chat ids are negative for groups: only 0 and what is no safe integer at all break the rule. */
const badChatId = fc.oneof(fc.constantFrom<Json>(...NOT_AN_ID), nonIntegers);
const MISSING = fc.constant(undefined as unknown as Json);

type IdRule = 'positive' | 'chat' | 'string';
const badValue = (rule: IdRule, required: boolean): fc.Arbitrary<Json> => {
  const wrong = rule === 'chat' ? badChatId : rule === 'positive' ? badPositiveId : fc.constantFrom<Json>('', 0, -1, null, true, [], {});
  return required ? fc.oneof(wrong, MISSING) : wrong;
};

const FORUM_CHAT = { id: -1001234567890, type: 'supergroup', title: 'Forum', is_forum: true };
const STRANGER_FROM = { id: STRANGERS[0], is_bot: false, first_name: 'Stranger' };
/** A stranger's forum-topic message with every id field Telegram can send: each is corrupted in turn below. */
const ID_MESSAGE: JsonObject = {
  message_id: 3,
  date: 1_700_000_000,
  chat: FORUM_CHAT,
  from: STRANGER_FROM,
  message_thread_id: 5,
  is_topic_message: true,
  text: 'hi',
  entities: [{ type: 'text_mention', offset: 0, length: 2, user: STRANGER_FROM }],
  reply_to_message: { message_id: 2, date: 1_700_000_000, chat: FORUM_CHAT, from: STRANGER_FROM, message_thread_id: 5, text: 'earlier' },
};
const ID_PRESS: JsonObject = {
  id: 'cbq-1',
  from: STRANGER_FROM,
  data: 'choice:1',
  message: Object.fromEntries(Object.entries(ID_MESSAGE).filter(([key]) => key !== 'reply_to_message')),
};

/** Every id field of a message and of a callback query, with its rule and whether it must be present. */
const MESSAGE_ID_FIELDS: Array<[JsonPath, IdRule, boolean]> = [
  [['update_id'], 'positive', true],
  [['message', 'message_id'], 'positive', true],
  [['message', 'chat', 'id'], 'chat', true],
  [['message', 'from', 'id'], 'positive', true],
  [['message', 'message_thread_id'], 'positive', false],
  [['message', 'entities', 0, 'user', 'id'], 'positive', true],
  [['message', 'reply_to_message', 'message_id'], 'positive', true],
  [['message', 'reply_to_message', 'chat', 'id'], 'chat', true],
  [['message', 'reply_to_message', 'from', 'id'], 'positive', true],
  [['message', 'reply_to_message', 'message_thread_id'], 'positive', false],
];
const PRESS_ID_FIELDS: Array<[JsonPath, IdRule, boolean]> = [
  [['callback_query', 'id'], 'string', true],
  [['callback_query', 'from', 'id'], 'positive', true],
  [['callback_query', 'message', 'message_id'], 'positive', true],
  [['callback_query', 'message', 'chat', 'id'], 'chat', true],
  [['callback_query', 'message', 'from', 'id'], 'positive', true],
  [['callback_query', 'message', 'message_thread_id'], 'positive', false],
];

/**
 * One id field of a well-formed update set to an edge value: a message is refused (400), a press dropped (200:
 * refusing it would only make Telegram send it again); neither is a 500, and neither reaches the agent.
 */
const malformedId: fc.Arbitrary<Case> = fc.oneof(
  fc.tuple(updateId, fc.constantFrom(...MESSAGE_ID_FIELDS)).chain(([id, [path, rule, required]]) =>
    badValue(rule, required).map((bad) => ({
      kind: `message with ${path.join('.')} = ${JSON.stringify(bad) ?? 'missing'}`,
      raw: jsonBody(setPath({ update_id: id, message: ID_MESSAGE }, path, bad)),
      expected: [400],
    })),
  ),
  fc.tuple(updateId, fc.constantFrom(...PRESS_ID_FIELDS)).chain(([id, [path, rule, required]]) =>
    badValue(rule, required).map((bad) => ({
      kind: `callback query with ${path.join('.')} = ${JSON.stringify(bad) ?? 'missing'}`,
      raw: jsonBody(setPath({ update_id: id, callback_query: ID_PRESS }, path, bad)),
      expected: [200],
    })),
  ),
);

const hasUpdateId = (v: Json): boolean => v !== null && typeof v === 'object' && !Array.isArray(v) && Number.isSafeInteger(v.update_id);

/** Any JSON at all: without an integer update_id a 400; with one, 200 or 400 depending on its message. */
const arbitraryJson: fc.Arbitrary<Case> = anyJson.map((value) => ({
  kind: 'arbitrary JSON',
  raw: jsonBody(value),
  expected: hasUpdateId(value) ? [200, 400] : [400],
}));

const deepNesting: fc.Arbitrary<Case> = fc.oneof(
  deeplyNestedJson.map((text) => ({ kind: 'deeply nested JSON', raw: { body: text, contentType: 'application/json' }, expected: [400] })),
  fc.tuple(updateId, deeplyNestedJson).map(([id, text]) => ({
    kind: 'deeply nested field',
    raw: { body: `{"update_id":${id},"edited_message":${text}}`, contentType: 'application/json' },
    expected: [200],
  })),
);

const notJsonBody: fc.Arbitrary<Case> = notJson.map((body) => ({ kind: 'not JSON', raw: { body, contentType: 'application/json' }, expected: '4xx' }));

const foreignType: fc.Arbitrary<Case> = fc
  .tuple(
    foreignContentType,
    fc.oneof(
      notJson,
      anyJson.filter((v) => !hasUpdateId(v)).map((v) => JSON.stringify(v)),
    ),
  )
  .map(([contentType, body]) => ({ kind: `content-type ${contentType}`, raw: { body, contentType }, expected: '4xx' }));

const OVERSIZE = 'over the body limit';
const oversize: fc.Arbitrary<Case> = fc.integer({ min: BODY_LIMIT + 1, max: BODY_LIMIT + 4096 }).map((n) => ({
  kind: OVERSIZE,
  raw: jsonBody({ update_id: 1, message: { text: 'x'.repeat(n) } }),
  expected: [413],
}));

const telegramCase: fc.Arbitrary<Case> = fc.oneof(
  { arbitrary: strangerMessage, weight: 60 },
  { arbitrary: corruptedProbeMessage, weight: 60 },
  { arbitrary: malformedId, weight: 60 },
  { arbitrary: otherUpdateKind, weight: 20 },
  { arbitrary: arbitraryJson, weight: 20 },
  { arbitrary: notJsonBody, weight: 20 },
  { arbitrary: foreignType, weight: 20 },
  { arbitrary: deepNesting, weight: 10 },
  { arbitrary: oversize, weight: 1 },
);

describe(`fuzz: the Telegram webhook (${FUZZ_RUNS} payloads, seed ${FUZZ_SEED})`, () => {
  let tg: TelegramFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;
  let hookUrl: string;

  beforeAll(async () => {
    tg = await startTelegramFake();
    llm = await startFakeOpenAI();
    for (const id of [PROBE, ...STRANGERS]) tg.world.ensureChat(id, 'private');
    const port = await freePort();
    hookUrl = `http://127.0.0.1:${port}/telegram/webhook`;
    const env = telegramEnv(tg, llm, { HERALD_PORT: String(port), TELEGRAM_WEBHOOK_URL: hookUrl, TELEGRAM_WEBHOOK_SECRET: SECRET });
    delete env.GATEWAY_ALLOW_ALL_USERS;
    gw = await startGateway({ env: { ...env, ...fuzzedGatewayEnv(), TELEGRAM_ALLOWED_USERS: String(PROBE) } });
    await waitFor(() => tg.webhook, { what: 'setWebhook' });
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await tg?.close();
  });

  const postStatus = async (c: Case): Promise<number> => {
    const res = await fetch(hookUrl, requestInit(c.raw, { [TELEGRAM_SECRET_HEADER]: SECRET }));
    const body = await res.text();
    if (hasStackTrace(body)) throw new Error(`${c.kind}: a stack trace in the answer: ${body.slice(0, 200)}`);
    return res.status;
  };

  it(
    'answers every payload with 200 or a 4xx, stays up with flat memory, lets nothing through to the LLM, and still answers PROBE',
    async () => {
      // The uncorrupted update is taken: each corrupted copy below is refused because of its corruption.
      const control = await fetch(hookUrl, requestInit(jsonBody({ ...PROBE_UPDATE, update_id: 1 }), { [TELEGRAM_SECRET_HEADER]: SECRET }));
      expect(control.status).toBe(200);
      // The probe's files do not exist on the stand-in: one reply names each of them, then the text is answered.
      await waitFor(() => llm.requests.length === 1 && repliesIn(tg, PROBE).length === 2, {
        timeoutMs: 20_000,
        what: 'the answer to the uncorrupted control update',
      });
      expect(repliesIn(tg, PROBE)[0]).toMatch(/^⚠️ doc\.pdf: /m);
      const controlText = llm.requests.map(lastUserText);
      expect(controlText[0]).toContain('hello from the probe');

      const run = await fuzz('telegram', gw, telegramCase, async (c) => {
        const status = c.kind === OVERSIZE ? await oversizeStatus(hookUrl, c.raw, { [TELEGRAM_SECRET_HEADER]: SECRET }) : await postStatus(c);
        if (!statusOk(c.expected, status, c.raw)) throw new Error(`${c.kind}: HTTP ${status}, expected ${String(c.expected)}`);
      });
      await expectSurvived(gw, run);
      expectNoErrorStacks(gw);
      expect(llm.requests.map(lastUserText), 'no LLM request for a fuzz payload').toEqual(controlText);

      tg.injectMessage({ chatId: PROBE, userId: PROBE, text: 'fuzzing is over' });
      await waitFor(() => repliesIn(tg, PROBE).length === 3, { timeoutMs: 20_000, what: "the answer to PROBE's valid message" });
      expect(repliesIn(tg, PROBE)[2]).toBe('ok: fuzzing is over');
      expect(llm.requests.map(lastUserText)).toEqual([...controlText, 'fuzzing is over']);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
