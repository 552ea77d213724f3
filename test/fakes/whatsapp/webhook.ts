/**
 * Meta's side of the webhook: payloads shaped as the Cloud API sends them (`object: whatsapp_business_account`,
 * `entry[].changes[].value` with metadata, contacts and messages or statuses), signed with the app secret in
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`.
 */
import { createHmac } from 'node:crypto';

export interface PostResult {
  status: number;
  body: string;
}

export function signWebhook(appSecret: string, raw: string | Buffer): string {
  return `sha256=${createHmac('sha256', appSecret).update(raw).digest('hex')}`;
}

/** Meta gives up on a webhook call after a while and delivers it again later. */
const META_TIMEOUT_MS = 20_000;

/** POSTs a raw body; `signature` null sends none, a string sends it as given. */
export async function postWebhook(url: string, raw: string, signature: string | null): Promise<PostResult> {
  const res = await fetch(url, {
    method: 'POST',
    signal: AbortSignal.timeout(META_TIMEOUT_MS),
    headers: { 'content-type': 'application/json', ...(signature !== null && { 'x-hub-signature-256': signature }) },
    body: raw,
  });
  return { status: res.status, body: await res.text() };
}

export interface NumberMeta {
  phoneNumberId: string;
  displayPhone: string;
}

/** One change of field `messages` for a business number. */
export function messagesPayload(num: NumberMeta, value: { contacts?: unknown[]; messages?: unknown[]; statuses?: unknown[] }): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA_ID_1',
        changes: [
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata: { display_phone_number: num.displayPhone, phone_number_id: num.phoneNumberId }, ...value },
          },
        ],
      },
    ],
  };
}
