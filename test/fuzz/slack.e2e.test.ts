/**
 * Fuzz, Slack Events over HTTP: one real gateway takes FUZZ_RUNS generated POSTs to /slack/events, each signed
 * with the right signing secret so it gets past the signature check to the parser — event_callback envelopes
 * with malformed events, url_verification variants, interactive payloads of the wrong shape, form-encoded
 * garbage, JSON of any shape, bytes that are not JSON. Well-formed payloads it takes or ignores get 200,
 * malformed ones a 4xx; never a 5xx or a dropped connection. Only PROBE is allowed: every well-formed message
 * comes from a stranger and every message of PROBE's lacks a field Herald needs, so nothing may reach the LLM
 * until PROBE's one valid message at the end, which must be answered.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { signSlackRequest, startSlackFake, type SlackFake } from '../fakes/slack/index.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { waitFor } from '../helpers/ports.js';
import { slackEnv, slackRepliesIn } from '../helpers/slack.js';
import {
  anyJson,
  corruptOneOf,
  deeplyNestedJson,
  notJson,
  oddOrHugeString,
  oddString,
  jsonBody,
  requestInit,
  type Json,
  type JsonObject,
  type RawBody,
} from './arbitraries.js';
import { FUZZ_RUNS, FUZZ_SEED, FUZZ_TEST_TIMEOUT_MS, fuzzWebhook, fuzzedGatewayEnv, type HttpCase } from './harness.js';

const PROBE = 'U0PROBE';
const PROBE_DM = 'D0PROBE';
const STRANGERS = Array.from({ length: 40 }, (_, i) => `U0STRANGER${i}`);
const TEAM = 'T0HERALD1';
const INGRESS_STARTED_LOG = 'slack: ingress started';

interface Case extends HttpCase {
  /** url_verification: the challenge the answer must echo. */
  challenge?: string;
}

const form = (fields: Array<[string, string]>): RawBody => ({ body: new URLSearchParams(fields).toString(), contentType: 'application/x-www-form-urlencoded' });

function envelope(event: Json, eventId: string, extra: JsonObject = {}): JsonObject {
  return {
    token: 'fake-verification-token',
    team_id: TEAM,
    api_app_id: 'A0HERALD1',
    event,
    type: 'event_callback',
    event_id: eventId,
    event_time: 1_700_000_000,
    authorizations: [{ enterprise_id: null, team_id: TEAM, user_id: 'U0HERALDBOT', is_bot: true, is_enterprise_install: false }],
    ...extra,
  };
}

const eventId = fc.stringMatching(/^Ev[0-9A-Z]{8,12}$/);
const ts = fc
  .tuple(fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }), fc.integer({ min: 0, max: 999_999 }))
  .map(([s, u]) => `${s}.${String(u).padStart(6, '0')}`);
const file = fc.record(
  { url_private: oddString, url_private_download: oddString, mimetype: oddString, name: oddString, size: fc.oneof(fc.nat(), fc.double()) },
  { requiredKeys: [] },
);

/** A well-formed message or mention from a stranger, in a DM or a channel, with odd text, threads and files. */
const strangerEvent: fc.Arbitrary<Case> = fc
  .tuple(
    eventId,
    fc.constantFrom(...STRANGERS),
    fc.constantFrom('message', 'app_mention'),
    fc.boolean(),
    ts,
    fc.record(
      {
        text: oddOrHugeString,
        thread_ts: ts,
        subtype: fc.constantFrom('file_share', 'thread_broadcast', 'message_changed', 'bot_message', 'channel_join'),
        files: fc.array(file, { maxLength: 3 }),
        user_profile: fc.record({ display_name: oddString, real_name: oddString }),
        blocks: fc.array(anyJson, { maxLength: 2 }),
      },
      { requiredKeys: ['text'] },
    ),
  )
  .map(([id, user, type, inDm, messageTs, fields]) => {
    const channel = inDm ? `D${user.slice(1)}` : 'C0GENERAL';
    const event = { type, user, ts: messageTs, channel, ...(inDm && type === 'message' && { channel_type: 'im' }), ...fields };
    return { kind: `stranger ${type}`, raw: jsonBody(envelope(event, id)), expected: [200] };
  });

/** PROBE's DM with one field Herald needs of the wrong type: ignored, or refused when Bolt cannot read it. */
const PROBE_EVENT: JsonObject = { type: 'message', channel: PROBE_DM, channel_type: 'im', user: PROBE, ts: '1700000000.000100', text: 'hello from the probe' };
const corruptedProbeEvent: fc.Arbitrary<Case> = fc
  .tuple(eventId, corruptOneOf(PROBE_EVENT, [['type'], ['channel'], ['user'], ['ts'], ['text']]))
  .map(([id, { value, path }]) => ({ kind: `probe message with a wrong ${path.join('.')}`, raw: jsonBody(envelope(value, id)), expected: [200, 400] }));

/**
 * A stranger's message whose channel, user, ts or thread_ts is no id the codec can take (a prototype name, a bot's
 * name, lone surrogates, a colon, a number): answered 200 and skipped with a warning, never an error with a stack.
 */
const BAD_SLACK_IDS: Json[] = [
  '__proto__',
  'constructor',
  'herald bot',
  '@herald',
  '\ud800',
  'C1\udc00',
  'C1:2',
  '-C1',
  '_C1',
  '1700000000.000100\ud800',
  '1700000000',
  '.5',
  'x'.repeat(300),
];
const malformedIdEvent: fc.Arbitrary<Case> = fc
  .tuple(
    eventId,
    fc.constantFrom(...STRANGERS),
    fc.constantFrom('channel', 'user', 'ts', 'thread_ts'),
    fc.oneof(fc.constantFrom(...BAD_SLACK_IDS), oddString),
    fc.boolean(),
  )
  .filter(
    ([, , field, bad]) =>
      typeof bad !== 'string' || bad === '' || !(field === 'ts' || field === 'thread_ts' ? /^\d+\.\d+$/ : /^[A-Z0-9][A-Z0-9_-]*$/i).test(bad),
  )
  .map(([id, user, field, bad, inDm]) => {
    const event: JsonObject = {
      type: 'message',
      user,
      ts: '1700000000.000100',
      thread_ts: '1700000000.000050',
      channel: inDm ? `D${user.slice(1)}` : 'C0GENERAL',
      ...(inDm && { channel_type: 'im' }),
      text: 'hello',
    };
    event[field] = bad;
    return { kind: `message with a malformed ${field}`, raw: jsonBody(envelope(event, id)), expected: [200] };
  });

/** An envelope whose event is not an object: refused. */
const eventNotAnObject: fc.Arbitrary<Case> = fc
  .tuple(eventId, fc.oneof(oddString, fc.double(), fc.constant(null), fc.boolean(), fc.array(anyJson, { maxLength: 3 })))
  .map(([id, event]) => ({ kind: 'event that is not an object', raw: jsonBody(envelope(event, id)), expected: [400] }));

/** Any event (known types, odd ones) and any envelope fields around it: 200 or 400, never 5xx. */
const junkEnvelope: fc.Arbitrary<Case> = fc
  .tuple(
    eventId,
    fc.dictionary(
      fc.oneof(fc.constantFrom('type', 'user', 'channel', 'ts', 'item', 'channel_id', 'subteam', 'bot_id', 'subtype', 'text'), oddString),
      anyJson,
      { maxKeys: 6 },
    ),
    fc.dictionary(fc.constantFrom('team_id', 'authorizations', 'enterprise_id', 'is_ext_shared_channel', 'event_id', 'api_app_id', 'type'), anyJson, {
      maxKeys: 3,
    }),
  )
  .map(([id, event, extra]) => ({ kind: 'odd event or envelope', raw: jsonBody(envelope(event, id, extra)), expected: [200, 400] }));

const urlVerification: fc.Arbitrary<Case> = fc.oneof(
  oddString.map((challenge) => ({ kind: 'url_verification', raw: jsonBody({ type: 'url_verification', token: 'x', challenge }), expected: [200], challenge })),
  fc
    .option(fc.oneof(fc.double(), fc.boolean(), fc.constant(null), fc.array(anyJson, { maxLength: 2 }), fc.dictionary(oddString, anyJson, { maxKeys: 2 })), {
      nil: undefined,
    })
    .map((challenge) => ({ kind: 'url_verification without a string challenge', raw: jsonBody({ type: 'url_verification', challenge }), expected: [400] })),
);

/** Interactive payloads (Herald registers no listener for them) and slash commands, of any shape. */
const interactive: fc.Arbitrary<Case> = fc
  .tuple(
    fc.constantFrom(
      'block_actions',
      'shortcut',
      'message_action',
      'view_submission',
      'view_closed',
      'block_suggestion',
      'dialog_submission',
      'interactive_message',
    ),
    fc.dictionary(
      fc.constantFrom('actions', 'view', 'user', 'team', 'channel', 'enterprise', 'name', 'response_url', 'response_urls', 'trigger_id', 'container'),
      anyJson,
      { maxKeys: 5 },
    ),
    fc.boolean(),
  )
  .map(([type, fields, asForm]) => {
    const payload = { type, ...fields };
    return { kind: `${type} payload`, raw: asForm ? form([['payload', JSON.stringify(payload)]]) : jsonBody(payload), expected: [200, 400] };
  });

/** Form-encoded bodies: a slash command from a stranger with odd text, random fields, `payload` that is not JSON. */
const formGarbage: fc.Arbitrary<Case> = fc.oneof(
  fc.tuple(fc.constantFrom(...STRANGERS), oddOrHugeString).map(([user, text]) => ({
    kind: 'slash command from a stranger',
    raw: form([
      ['command', '/herald'],
      ['text', text],
      ['user_id', user],
      ['channel_id', `D${user.slice(1)}`],
      ['team_id', TEAM],
      ['trigger_id', '1.2.3'],
    ]),
    expected: [200],
  })),
  fc
    .array(fc.tuple(fc.oneof(fc.constantFrom('command', 'event', 'payload', 'actions', 'type', 'user_id', 'name'), oddString), oddString), { maxLength: 6 })
    .map((fields) => ({
      kind: 'form fields',
      raw: form(fields),
      expected: [200, 400],
    })),
  notJson.map((body) => ({
    kind: 'form payload that is not JSON',
    raw: form([['payload', typeof body === 'string' ? body : Buffer.from(body).toString('latin1')]]),
    expected: [400],
  })),
);

const otherBodies: fc.Arbitrary<Case> = fc.oneof(
  notJson.map((body) => ({ kind: 'not JSON', raw: { body, contentType: 'application/json' }, expected: [400] })),
  anyJson.map((value) => ({ kind: 'arbitrary JSON', raw: jsonBody(value), expected: [200, 400] })),
  deeplyNestedJson.map((body) => ({ kind: 'deeply nested JSON', raw: { body, contentType: 'application/json' }, expected: [200, 400] })),
);

const slackCase: fc.Arbitrary<Case> = fc.oneof(
  { arbitrary: strangerEvent, weight: 6 },
  { arbitrary: corruptedProbeEvent, weight: 4 },
  { arbitrary: malformedIdEvent, weight: 4 },
  { arbitrary: eventNotAnObject, weight: 2 },
  { arbitrary: junkEnvelope, weight: 4 },
  { arbitrary: urlVerification, weight: 2 },
  { arbitrary: interactive, weight: 3 },
  { arbitrary: formGarbage, weight: 3 },
  { arbitrary: otherBodies, weight: 3 },
);

/** Signs the body exactly as it goes on the wire, as Slack does. */
function signedInit(slack: SlackFake, raw: RawBody, extra: Record<string, string> = {}): RequestInit {
  const timestamp = Math.floor(Date.now() / 1000);
  const bytes = typeof raw.body === 'string' ? raw.body : Buffer.from(raw.body).toString('utf8');
  const body = typeof raw.body === 'string' ? raw.body : new TextEncoder().encode(bytes);
  return requestInit(
    { ...raw, body },
    { 'x-slack-request-timestamp': String(timestamp), 'x-slack-signature': signSlackRequest(slack.signingSecret, timestamp, bytes), ...extra },
  );
}

describe(`fuzz: Slack Events over HTTP (${FUZZ_RUNS} payloads, seed ${FUZZ_SEED})`, () => {
  let slack: SlackFake;
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    slack = await startSlackFake();
    llm = await startFakeOpenAI();
    const env = slackEnv(slack, llm, 'http');
    delete env.GATEWAY_ALLOW_ALL_USERS;
    gw = await startGateway({ env: { ...env, ...fuzzedGatewayEnv(), SLACK_ALLOWED_USERS: PROBE } });
    await gw.waitForLog((l) => l.msg === INGRESS_STARTED_LOG, 'the Slack ingress to start');
    slack.setEventsUrl(`${gw.url}/slack/events`);
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await slack?.close();
  });

  it(
    'answers every signed payload with 200 or a 4xx, stays up with flat memory, lets nothing through to the LLM, and still answers PROBE',
    async () => {
      const url = `${gw.url}/slack/events`;
      // The uncorrupted event is taken: each corrupted copy below is refused because of its corruption.
      const control = await fetch(url, signedInit(slack, jsonBody(envelope(PROBE_EVENT, 'Ev0CONTROL01'))));
      expect(control.status).toBe(200);
      await waitFor(() => slackRepliesIn(slack, PROBE_DM).length === 1, { timeoutMs: 20_000, what: 'the answer to the uncorrupted control event' });
      expect(slackRepliesIn(slack, PROBE_DM)).toEqual(['ok: hello from the probe']);

      await fuzzWebhook('slack', gw, slackCase, (c) => fetch(url, signedInit(slack, c.raw)), {
        check: (c, text) => {
          if (c.challenge !== undefined && (JSON.parse(text) as { challenge?: unknown }).challenge !== c.challenge) {
            throw new Error(`url_verification answered ${text.slice(0, 200)}`);
          }
        },
        llmInputs: () => llm.requests.map(lastUserText),
        allowedLlmInputs: ['hello from the probe'],
      });

      await slack.dm({ user: PROBE, channel: PROBE_DM, text: 'fuzzing is over' });
      await waitFor(() => slackRepliesIn(slack, PROBE_DM).length === 2, { timeoutMs: 20_000, what: "the answer to PROBE's valid message" });
      expect(slackRepliesIn(slack, PROBE_DM)).toEqual(['ok: hello from the probe', 'ok: fuzzing is over']);
      expect(llm.requests.map(lastUserText)).toEqual(['hello from the probe', 'fuzzing is over']);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
