import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { floorLine, waitForQuiet, type PhaseFigures, type ProcessCpu } from '../../bench/read-phase-probe.ts';

/** A ProcessCpu that answers the readings given, one per call, then the last one again. */
const readings = (...steps: Record<string, number>[]): ProcessCpu => {
  let i = 0;
  return () => Promise.resolve(steps[Math.min(i++, steps.length - 1)]!);
};

describe("bench:lifecycle's read-phase probe", () => {
  it('waits while the other processes work, and calls the service quiet once they stop', async () => {
    const quiet = await waitForQuiet(
      readings(
        { worker: 0, PostgreSQL: 0 },
        { worker: 0.05, PostgreSQL: 0 }, // half a core over 0.1 s: busy
        { worker: 0.05, PostgreSQL: 0.001 }, // 1 % of a core: quiet
      ),
      { windowMs: 100, timeoutMs: 10_000 },
    );
    expect(quiet.quiet).toBe(true);
    // Two windows of 0.1 s: one busy, one quiet (timers may fire a little early).
    expect(quiet.seconds).toBeGreaterThan(0.15);
    expect(quiet.last.worker).toBe(0);
    expect(quiet.last.PostgreSQL).toBeCloseTo(0.01, 5);
  });

  it('counts a reading that went down (a process gone) as nothing, not as negative work', async () => {
    // Temporal's reading fell by 5 s (its process gone) while PostgreSQL worked a quarter of a core: busy.
    const busy = await waitForQuiet(
      readings({ Temporal: 5, PostgreSQL: 1 }, { Temporal: 0, PostgreSQL: 1.025 }),
      { windowMs: 100, timeoutMs: 50 },
    );
    expect(busy.quiet).toBe(false);
    expect(busy.last.Temporal).toBe(0);
    expect(busy.last.PostgreSQL).toBeCloseTo(0.25, 5);
  });

  it("states Little's law for the closed loop from the CPU the reads need", () => {
    const phase: PhaseFigures = {
      seconds: 10,
      requests: 20_000,
      serverObserved: false,
      loadAverage: 1,
      // 0.25 + 0.1 + 0.15 = 0.5 CPU ms a request; the worker's share is not the reads' own.
      cores: { server: 0.5, driver: 0.2, PostgreSQL: 0.3, worker: 0.5, 'rest of the machine': 0 },
      eventLoopDelayP99Ms: 1,
      eventLoopDelayMaxMs: 1,
      gcPauses: 0,
      gcMsTotal: 0,
      gcMsMax: 0,
      gcMajor: 0,
      gcMajorMs: 0,
      heapUsedMb: 1,
    };
    const cores = os.cpus().length;
    const maxRate = (cores * 1000) / 0.5;
    const line = floorLine(phase, 50, 2000);
    expect(line).toContain('50 connections ÷ 2000 requests/s = 25.0 ms mean');
    expect(line).toContain('need 0.500 CPU ms a request');
    expect(line).toContain(`answer at most ${maxRate.toFixed(0)} requests/s`);
    expect(line).toContain(`a mean of at least ${((50 / maxRate) * 1000).toFixed(1)} ms`);
  });
});
