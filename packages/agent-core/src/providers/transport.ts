/**
 * One SDK client per API key, each on its own HTTP connection pool, rebuilt after a transport failure (a stalled
 * stream, a reset connection, a timeout). Node's global fetch shares one pool across the process, so a retry
 * after a network hiccup could pick up a dead keep-alive socket again; a fresh undici Agent cannot.
 */
import { Agent, fetch as undiciFetch } from 'undici';
import type { PooledKey } from './types.js';

/** What the SDKs accept as `fetch`: the WHATWG signature. */
export type FetchFn = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface Transport {
  fetch: FetchFn;
  close(): void;
}

/** A fetch bound to a private connection pool. */
export function createTransport(): Transport {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const bound = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    // undici's own Request/Response types differ from the DOM lib's only nominally; this is the SDK boundary.
    undiciFetch(input as Parameters<typeof undiciFetch>[0], { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent }) as unknown as Promise<Response>;
  return {
    fetch: bound,
    close: () => void agent.destroy().catch(() => undefined),
  };
}

interface Slot<C> {
  client: C;
  close: () => void;
}

/** Clients by key fingerprint; `rebuild` drops a key's client and its sockets so the next call starts afresh. */
export class ClientPool<C> {
  private readonly slots = new Map<string, Slot<C>>();
  /** How many clients were rebuilt after transport failures (for tests and the operator's log line). */
  rebuilds = 0;

  constructor(private readonly build: (key: PooledKey) => Slot<C>) {}

  get(key: PooledKey): C {
    let slot = this.slots.get(key.fingerprint);
    if (!slot) {
      slot = this.build(key);
      this.slots.set(key.fingerprint, slot);
    }
    return slot.client;
  }

  rebuild(key: PooledKey): void {
    const slot = this.slots.get(key.fingerprint);
    if (!slot) return;
    this.slots.delete(key.fingerprint);
    this.rebuilds += 1;
    slot.close();
  }
}
