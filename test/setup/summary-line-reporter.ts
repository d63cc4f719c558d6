import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain line, `tests: N passed, N failed, N skipped`, after vitest's own summary: no colours,
 * no table, so a reader of the closing lines (a CI harness, a grep in a log) sees what ran without parsing vitest's
 * coloured summary. A module that failed with no failed test (a file that failed to load, a `beforeAll` that threw)
 * counts as one failure.
 */
export default class SummaryLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = unhandledErrors.length;
    let skipped = 0;
    for (const module of testModules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedHere += 1;
        else skipped += 1;
      }
      // A module that failed without a failed test (it did not load, or a beforeAll threw and its tests were
      // skipped) counts as one failure: the line must never read 0 failed when vitest exits non-zero.
      failed += failedHere === 0 && module.state() === 'failed' ? 1 : failedHere;
    }
    process.stdout.write(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
