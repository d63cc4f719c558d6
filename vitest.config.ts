import { configDefaults, defineConfig } from 'vitest/config';

/** Tests that need neither PostgreSQL nor Temporal: `npm run test:unit` runs them without starting either. */
const UNIT = 'test/**/*.unit.test.ts';

export default defineConfig({
  test: {
    pool: 'forks',
    // Most tests wait on Temporal, PostgreSQL and HTTP rather than compute: two files at a time on two cores.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    // vitest's summary, then one plain closing line (tests: N passed, N failed, N skipped) for CI logs.
    reporters: ['default', './test/setup/summary-line-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: [UNIT] } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, UNIT],
          // A real PostgreSQL and a real Temporal server, started once for the whole run.
          globalSetup: ['test/setup/global-setup.ts'],
          // A whole flow (notifications, actions, finalization and signing) through Temporal on two shared cores
          // took up to 30 s in CI: the time-out only stops a hung test, it measures nothing (speed is bench/'s).
          testTimeout: 120_000,
        },
      },
    ],
  },
});
