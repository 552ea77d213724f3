/**
 * Fuzz, WhatsApp Cloud API webhook: one real gateway takes FUZZ_RUNS generated POSTs to /whatsapp/webhook, each
 * signed with the app secret so it gets past the signature check to the parser: messages of every kind with fields
 * of the wrong type, odd ids and timestamps, statuses, envelopes of any shape, JSON of any shape, bytes that are not
 * JSON. Well-formed payloads get 200, malformed bodies a 400; never a 5xx or a dropped connection. Only PROBE is
 * allowed, and every message of PROBE's lacks a field Herald needs, so nothing may reach the LLM until PROBE's one
 * valid message at the end, which must be answered. Forged signatures are refused (401) throughout.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeLLM } from '../fakes/llm/index.js';
import { messagesPayload, signWebhook, startWhatsAppFake, type WhatsAppFake } from '../fakes/whatsapp/index.js';
import { startGateway, type GatewayProcess } from '../helpers/gateway.js';
import { lastUserText } from '../helpers/llm-tags.js';
import { waitFor } from '../helpers/ports.js';
import { whatsappEnv, whatsappTexts } from '../helpers/whatsapp.js';
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
} from './arbitraries.js';
import { FUZZ_RUNS, FUZZ_SEED, FUZZ_TEST_TIMEOUT_MS, fuzzWebhook, fuzzedGatewayEnv, type HttpCase } from './harness.js';

const PROBE = '15550009999';
const STRANGERS = Array.from({ length: 20 }, (_, i) => `1555001${String(i).padStart(4, '0')}`);
const READY_LOG = 'whatsapp number ready for webhooks';

let wa: WhatsAppFake;
const num = (): { phoneNumberId: string; displayPhone: string } => ({ phoneNumberId: wa.phoneNumberId, displayPhone: wa.displayPhone });
const wamid = fc.stringMatching(/^wamid\.[A-Za-z0-9=]{8,40}$/);
const nowSec = (): string => String(Math.floor(Date.now() / 1000));

const kinds: fc.Arbitrary<[string, JsonObject]> = fc.oneof(
  oddOrHugeString.map((body) => ['text', { body }] as [string, JsonObject]),
  fc.record({ id: oddString, mime_type: oddString, caption: oddString }, { requiredKeys: [] }).map((p) => ['image', p] as [string, JsonObject]),
  fc.record({ id: oddString, mime_type: oddString, voice: fc.boolean() }, { requiredKeys: [] }).map((p) => ['audio', p] as [string, JsonObject]),
  fc.record({ id: oddString, filename: oddString, mime_type: oddString }, { requiredKeys: [] }).map((p) => ['document', p] as [string, JsonObject]),
  fc.record({ message_id: oddString, emoji: oddString }, { requiredKeys: [] }).map((p) => ['reaction', p] as [string, JsonObject]),
  fc.record({ latitude: fc.oneof(fc.double(), oddString), longitude: fc.double(), name: oddString }).map((p) => ['location', p] as [string, JsonObject]),
  fc.dictionary(oddString, anyJson, { maxKeys: 3 }).map((p) => ['interactive', p] as [string, JsonObject]),
  fc.tuple(oddString, fc.dictionary(oddString, anyJson, { maxKeys: 3 })).map(([t, p]) => [t, p] as [string, JsonObject]),
);

/** A message from a stranger, of any kind and odd content: 200 (a pairing code, or skipped). */
const strangerMessage: fc.Arbitrary<HttpCase> = fc
  .tuple(wamid, fc.constantFrom(...STRANGERS), kinds, fc.option(wamid, { nil: undefined }))
  .map(([id, from, [type, part], replyTo]) => ({
    kind: `stranger ${type.slice(0, 20)}`,
    raw: jsonBody(
      messagesPayload(num(), {
        contacts: [{ profile: { name: 'x' }, wa_id: from }],
        messages: [{ from, id, timestamp: nowSec(), type, [type]: part, ...(replyTo && { context: { id: replyTo } }) }],
      }),
    ),
    expected: [200],
  }));

/** PROBE's text with one field Herald needs of the wrong type: skipped with 200. */
const probeMessage = (): Json => ({ from: PROBE, id: 'wamid.PROBE0001', timestamp: nowSec(), type: 'text', text: { body: 'hello from the probe' } });
const corruptedProbe: fc.Arbitrary<HttpCase> = fc.constant(null).chain(() =>
  corruptOneOf(probeMessage(), [['from'], ['id'], ['type'], ['text'], ['text', 'body']]).map(({ value, path }) => ({
    kind: `probe message with a wrong ${path.join('.')}`,
    raw: jsonBody(messagesPayload(num(), { messages: [value] })),
    expected: [200],
  })),
);

/** Statuses of any shape, and changes of other fields or other numbers: acknowledged. */
const statuses: fc.Arbitrary<HttpCase> = fc.oneof(
  fc
    .array(fc.dictionary(fc.constantFrom('id', 'status', 'timestamp', 'recipient_id', 'errors', 'pricing', 'conversation'), anyJson, { maxKeys: 5 }), {
      maxLength: 3,
    })
    .map((s) => ({
      kind: 'statuses',
      raw: jsonBody(messagesPayload(num(), { statuses: s as Json[] })),
      expected: [200],
    })),
  fc.tuple(oddString, anyJson).map(([phoneNumberId, messages]) => ({
    kind: 'another number or odd messages',
    raw: jsonBody(messagesPayload({ phoneNumberId, displayPhone: '1' }, { messages: messages as Json[] })),
    expected: [200, 503],
  })),
);

/** Envelopes of any shape around the entries. */
const envelopes: fc.Arbitrary<HttpCase> = fc.oneof(
  fc
    .record(
      { object: fc.oneof(fc.constant('whatsapp_business_account'), oddString), entry: fc.oneof(fc.array(anyJson, { maxLength: 3 }), anyJson) },
      { requiredKeys: [] },
    )
    .map((v) => ({
      kind: 'odd envelope',
      raw: jsonBody(v),
      expected: [200, 400],
    })),
  notJson.map((body) => ({ kind: 'not JSON', raw: { body, contentType: 'application/json' }, expected: [400] })),
  anyJson.map((value) => ({ kind: 'arbitrary JSON', raw: jsonBody(value), expected: [200, 400] })),
  deeplyNestedJson.map((body) => ({ kind: 'deeply nested JSON', raw: { body, contentType: 'application/json' }, expected: [200, 400] })),
);

/** A body signed with another secret, or not at all: 401. */
const forged: fc.Arbitrary<HttpCase & { forged: string | null }> = fc
  .tuple(strangerMessage, fc.option(oddString, { nil: null }))
  .map(([c, sig]) => ({ ...c, kind: 'forged signature', expected: [401], forged: sig }));

const whatsappCase = fc.oneof(
  { arbitrary: strangerMessage, weight: 6 },
  { arbitrary: corruptedProbe, weight: 4 },
  { arbitrary: statuses, weight: 3 },
  { arbitrary: envelopes, weight: 4 },
  { arbitrary: forged as fc.Arbitrary<HttpCase>, weight: 2 },
);

function signedInit(raw: HttpCase['raw'], forgedSig?: string | null): RequestInit {
  const bytes = typeof raw.body === 'string' ? Buffer.from(raw.body) : Buffer.from(raw.body);
  const sig = forgedSig === undefined ? signWebhook(wa.appSecret, bytes) : forgedSig === null ? undefined : `sha256=${Buffer.from(forgedSig).toString('hex')}`;
  return requestInit(raw, sig === undefined ? {} : { 'x-hub-signature-256': sig });
}

describe(`fuzz: WhatsApp webhook (${FUZZ_RUNS} payloads, seed ${FUZZ_SEED})`, () => {
  let llm: FakeLLM;
  let gw: GatewayProcess;

  beforeAll(async () => {
    wa = await startWhatsAppFake();
    for (const s of [...STRANGERS, PROBE]) wa.openWindow(s);
    llm = await startFakeOpenAI();
    const env = whatsappEnv(wa, llm);
    delete env.GATEWAY_ALLOW_ALL_USERS;
    gw = await startGateway({ env: { ...env, ...fuzzedGatewayEnv(), WHATSAPP_ALLOWED_USERS: PROBE } });
    await gw.waitForLog((l) => l.msg === READY_LOG, 'the WhatsApp ingress to start');
    wa.setWebhookUrl(`${gw.url}/whatsapp/webhook`);
  });
  afterAll(async () => {
    await gw?.stop();
    await llm?.close();
    await wa?.close();
  });

  it(
    'answers every signed payload with 200 or a 4xx, refuses forged ones, stays up, lets nothing through to the LLM, and still answers PROBE',
    async () => {
      const url = `${gw.url}/whatsapp/webhook`;
      const control = await fetch(url, signedInit(jsonBody(messagesPayload(num(), { messages: [probeMessage()] }))));
      expect(control.status).toBe(200);
      await waitFor(() => whatsappTexts(wa, PROBE).length === 1, { timeoutMs: 20_000, what: 'the answer to the control message' });

      await fuzzWebhook('whatsapp', gw, whatsappCase, (c) => fetch(url, signedInit(c.raw, (c as { forged?: string | null }).forged)), {
        llmInputs: () => llm.requests.map(lastUserText),
        allowedLlmInputs: ['hello from the probe'],
      });

      await wa.text('fuzzing is over', { from: PROBE });
      await waitFor(() => whatsappTexts(wa, PROBE).length === 2, { timeoutMs: 20_000, what: "the answer to PROBE's valid message" });
      expect(llm.requests.map(lastUserText)).toEqual(['hello from the probe', 'fuzzing is over']);
    },
    FUZZ_TEST_TIMEOUT_MS,
  );
});
