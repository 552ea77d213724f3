/**
 * Typed store errors, so the gateway can answer a user (title taken, unknown session) or retry a job
 * (database busy) without matching on message strings.
 */

export class StoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The database stayed locked by other processes through every retry. Worth retrying the whole job later. */
export class StoreBusyError extends StoreError {
  constructor(
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(`database is busy: gave up after ${attempts} attempts`, options);
  }
}

/** The database server cannot be reached (down, restarting, network): the same call may work later. */
export class StoreUnavailableError extends StoreError {}

/** Busy or unreachable: worth running the job again later, unlike a constraint or a bug. */
export function isTransientStoreError(err: unknown): boolean {
  return err instanceof StoreBusyError || err instanceof StoreUnavailableError;
}

/**
 * A worker with a newer fencing token owns this turn (this one lost its session lock, or was abandoned by the
 * watchdog): nothing may be written or sent on this token any more.
 */
export class FencedOutError extends StoreError {
  constructor(
    readonly turnId: string,
    readonly fence: number,
  ) {
    super(`turn ${turnId} belongs to a newer worker (fence ${fence} is stale)`);
  }
}

/** A session or turn id that does not exist. */
export class StoreNotFoundError extends StoreError {
  constructor(
    readonly kind: 'session' | 'turn',
    readonly id: string,
  ) {
    super(`${kind} not found: ${id}`);
  }
}

/** Another session, outside this one's lineage, already carries the title. */
export class TitleInUseError extends StoreError {
  constructor(
    readonly title: string,
    readonly sessionId: string,
  ) {
    super(`title "${title}" is already used by session ${sessionId}`);
  }
}

/** A listing cursor that this store did not hand out. */
export class InvalidCursorError extends StoreError {
  constructor(readonly cursor: string) {
    super(`invalid cursor: ${cursor}`);
  }
}
