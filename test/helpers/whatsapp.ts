/**
 * For end-to-end tests against the WhatsApp stand-in: the gateway environment, waiting for the webhook route, and
 * what the bot sent to a user.
 */
import type { FakeLLM } from '../fakes/llm/index.js';
import type { WhatsAppFake } from '../fakes/whatsapp/index.js';
import { join } from 'node:path';
import type { Cluster } from './cluster.js';
import { startGateway, type GatewayProcess } from './gateway.js';
import { waitFor } from './ports.js';

/** The log line each number's ingress writes once it takes webhooks. */
const READY_MSG = 'whatsapp number ready for webhooks';

export function whatsappEnv(wa: WhatsAppFake, llm: FakeLLM, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WHATSAPP_ACCESS_TOKEN: wa.accessToken,
    WHATSAPP_PHONE_NUMBER_ID: wa.phoneNumberId,
    WHATSAPP_APP_SECRET: wa.appSecret,
    WHATSAPP_VERIFY_TOKEN: wa.verifyToken,
    WHATSAPP_API_URL: wa.apiUrl,
    HERALD_MODEL: 'openai:gpt-4.1-mini',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.url,
    GATEWAY_ALLOW_ALL_USERS: 'true',
    ...extra,
  };
}

/** Waits for the number(s) to attach, then points the stand-in's webhook sender at the gateway. */
export async function waitForWhatsApp(wa: WhatsAppFake, cluster: Cluster, numbers = 1): Promise<void> {
  await waitFor(() => cluster.ingress.logs().filter((l) => l.msg === READY_MSG).length >= numbers, {
    timeoutMs: 20_000,
    what: `the WhatsApp ingress to start:\n${cluster.ingress.output.join('\n')}`,
  });
  wa.setWebhookUrl(`${cluster.ingress.url}/whatsapp/webhook`);
}

/**
 * A `--role all` gateway of its own, for tests that restart it: its SQLite file in `dir` and its Redis prefix
 * `prefix` outlive the process. Resolves once `numbers` business numbers take webhooks, the stand-in pointed at it.
 */
export async function startWhatsAppGateway(
  wa: WhatsAppFake,
  llm: FakeLLM,
  opts: { dir: string; prefix: string; numbers?: number; env?: Record<string, string> },
): Promise<GatewayProcess> {
  const env = whatsappEnv(wa, llm, { HERALD_DB: join(opts.dir, 'herald.db'), HERALD_REDIS_PREFIX: opts.prefix, ...opts.env });
  const g = await startGateway({ env, args: ['--role', 'all'] });
  const numbers = opts.numbers ?? 1;
  await waitFor(() => g.logs().filter((l) => l.msg === READY_MSG).length >= numbers, {
    timeoutMs: 20_000,
    what: `${numbers} number(s):\n${g.output.join('\n')}`,
  });
  wa.setWebhookUrl(`${g.url}/whatsapp/webhook`);
  return g;
}

/** The texts (text messages and interactive bodies) the bot sent to a user, in order. */
export function whatsappTexts(wa: WhatsAppFake, waId: string): string[] {
  return wa
    .sentTo(waId)
    .filter((s) => s.type === 'text' || s.type === 'interactive')
    .map((s) => s.text);
}
