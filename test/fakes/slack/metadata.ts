/** Message metadata (`chat.postMessage` `metadata`) as Slack takes it and validates it. */

/** Message metadata as an app attached it (`chat.postMessage` `metadata`). */
export interface MessageMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/**
 * `metadata` as chat.postMessage takes it: an object, or its JSON in a form body. Absent: undefined; unusable:
 * Slack's error code.
 */
export function metadataOf(raw: unknown): MessageMetadata | string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let parsed: unknown = raw;
  if (typeof raw === 'string') {
    try {
      parsed = JSON.parse(raw);
    } catch {
      return 'invalid_metadata_format';
    }
  }
  if (!isRecord(parsed)) return 'invalid_metadata_format';
  const { event_type: eventType, event_payload: payload } = parsed;
  if (typeof eventType !== 'string' || eventType === '' || !isRecord(payload)) return 'invalid_metadata_schema';
  return { event_type: eventType, event_payload: payload };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
