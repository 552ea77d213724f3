/**
 * Environment variables set for the tests of one file and put back afterwards: for code under test that reads the
 * environment itself (the AWS credential chain).
 */
import { afterAll, beforeAll } from 'vitest';

export function useProcessEnv(env: Readonly<Record<string, string>>): void {
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });
  afterAll(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
}
