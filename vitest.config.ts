import { configDefaults, defineConfig } from 'vitest/config';

/** Tests that need neither PostgreSQL nor Temporal: `npm run test:unit` runs them without starting either. */
const UNIT = 'test/**/*.unit.test.ts';

export default defineConfig({
  // vitest starts the files that took longest in the last run first, from the durations it keeps in this folder.
  // CI's clone is fresh each time: .ci/run points VITEST_CACHE_DIR outside it so that order survives between runs.
  ...(process.env.VITEST_CACHE_DIR && { cacheDir: process.env.VITEST_CACHE_DIR }),
  test: {
    pool: 'forks',
    // Many tests wait on Temporal timers, retries and child processes rather than compute: three files at a time
    // keep two cores busy where two files left them idle a third of the run.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    // vitest's summary, then one plain closing line (tests: N passed, N failed, N skipped) for CI logs.
    reporters: ['default', './test/setup/summary-line-reporter.ts'],
    projects: [
      {
        extends: true,
        // Unit files keep no state between them (no mocks, stubbed globals or shared servers), so each worker
        // loads the modules they share once instead of once per file: two thirds less import time for this project.
        test: { name: 'unit', include: [UNIT], isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, UNIT],
          // Files run one after another in each worker process, sharing its loaded modules, as unit files do: each
          // file starts and closes its own service, database, task queue and child processes, and the one
          // process-wide thing, Temporal's SDK runtime, is installed once (test/helpers/temporal-runtime.ts).
          isolate: false,
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
