/**
 * Shared by this folder's tests (not exported from the package): a temp directory per test file and stores
 * on real WAL files inside it, closed after each test and removed after the file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { SessionStore } from './session-store.js';

export interface TempStores {
  dir: string;
  /** A fresh path inside the temp directory. */
  file(name?: string): string;
  /** A store on a fresh (or the given) file, closed after the current test. */
  open(file?: string): SessionStore;
}

export function useTempStores(): TempStores {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-store-'));
  const opened: SessionStore[] = [];
  let counter = 0;
  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name?: string): string => path.join(dir, name ?? `store-${++counter}.db`);
  return {
    dir,
    file,
    open(at?: string): SessionStore {
      const store = SessionStore.open(at ?? file());
      opened.push(store);
      return store;
    },
  };
}
