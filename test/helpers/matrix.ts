/**
 * For end-to-end tests against the Matrix homeserver stand-in: the gateway environment, waiting for the first
 * /sync, and what the bot said in a room.
 */
import type { FakeLLM } from '../fakes/llm/index.js';
import type { MatrixFake } from '../fakes/matrix/index.js';

export function matrixEnv(mx: MatrixFake, llm: FakeLLM, extra: Record<string, string> = {}): Record<string, string> {
  return {
    MATRIX_HOMESERVER_URL: mx.url,
    MATRIX_ACCESS_TOKEN: mx.accessToken,
    MATRIX_USER_ID: mx.userId,
    MATRIX_TOOL_PROGRESS: 'off',
    MATRIX_STREAMING: 'false',
    HERALD_MODEL: 'openai:gpt-4.1-mini',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.url,
    GATEWAY_ALLOW_ALL_USERS: 'true',
    ...extra,
  };
}

/** Waits until the bot's ingress has taken its position (a /sync answered after start-up). */
export async function waitForMatrix(mx: MatrixFake, syncsBefore = 0): Promise<void> {
  await mx.waitFor(() => mx.requests.filter((r) => r.path.endsWith('/sync') && r.status === 200).length > syncsBefore, 20_000, 'the first /sync');
}

/** The bot's text messages in a room as the user sees them (after edits), in order. */
export function matrixTexts(mx: MatrixFake, roomId: string): string[] {
  return mx
    .shown(roomId)
    .filter((m) => !m.redacted && (m.msgtype === 'm.text' || m.msgtype === 'm.notice'))
    .map((m) => m.body);
}
