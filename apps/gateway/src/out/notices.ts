/**
 * What the user is told when a file of the reply could not be sent (its text went out already): one short line
 * naming the file and the reason, never a platform's raw error (those go to the log, without tokens).
 */
import { AuthError, FileTooLargeError, NotFoundError, RateLimitedError, platformDisplayName } from '@herald/adapters';
import { formatBytes, type TurnFile } from '@herald/agent-core';

function seconds(ms: number): string {
  const s = Math.ceil(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.ceil(s / 60)} min`;
}

export function uploadFailureNotice(file: Pick<TurnFile, 'name' | 'size' | 'kind'>, platform: string, err: unknown): string {
  const where = platformDisplayName(platform);
  const what = file.kind === 'voice' ? 'the voice reply' : `“${file.name}” (${formatBytes(file.size)})`;
  let why: string;
  if (err instanceof FileTooLargeError) {
    why = `it is larger than ${where} accepts from bots here${err.limitBytes ? ` (${formatBytes(err.limitBytes)})` : ''}`;
  } else if (err instanceof RateLimitedError) {
    why = `${where} is limiting how fast I may upload; ask again in ${seconds(err.retryAfterMs)}`;
  } else if (err instanceof AuthError) {
    why = `I am not allowed to upload files here (the bot needs that permission on ${where})`;
  } else {
    why = `${where} did not take the upload`;
  }
  return `⚠️ I could not send ${what}: ${why}.`;
}

/** A conversation that is gone takes no notice either. */
export function canNotify(err: unknown): boolean {
  return !(err instanceof NotFoundError);
}
