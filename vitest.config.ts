import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // End-to-end tests start real processes against real Redis; give them room on a shared 2-core machine (these
    // are deadlines for a hung test, not speed assertions: tests wait for events).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
    // The run's own temp directory and Redis key prefix, and a failed run when a test leaves either behind.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      {
        // Units: in-process, many files at once.
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'apps/*/src/**/*.test.ts', 'apps/*/bin/**/*.test.ts', 'test/fakes/**/*.test.ts'],
        },
      },
      {
        // End to end: each file starts gateway processes, stand-ins and Redis servers of its own; running a few at
        // a time keeps them from starving each other of CPU.
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: ['test/fakes/**'],
          maxWorkers: 2,
        },
      },
    ],
  },
});
