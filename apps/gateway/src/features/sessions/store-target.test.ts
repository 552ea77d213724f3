/**
 * Whatever opens the store through store-target (every CLI command) must know every migration the gateway
 * registers: otherwise a command creates half the schema, and `herald store restore` takes a backup the gateway
 * wrote for one "from a newer Herald". No static imports here, so the first import below sees store-target alone.
 */
import { describe, expect, it, vi } from 'vitest';

async function versionsAfterImporting(module: string): Promise<number[]> {
  vi.resetModules();
  await import(module);
  const { allMigrations } = await import('@herald/agent-core');
  return allMigrations().map((m) => m.version);
}

describe('store-target', () => {
  it('registers every migration the whole gateway registers', async () => {
    const fromStoreTarget = await versionsAfterImporting('./store-target.js');
    const fromGateway = await versionsAfterImporting('../../roles/app.js');
    expect(fromGateway.length).toBeGreaterThan(2);
    expect(fromStoreTarget).toEqual(fromGateway);
  });
});
