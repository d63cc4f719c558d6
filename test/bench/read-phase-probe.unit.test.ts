import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { gcTrace, parseGcLine } from '../../bench/gc-trace.ts';
import {
  floorLine,
  observePhase,
  phaseLine,
  waitForQuiet,
  type PhaseFigures,
  type ProcessCpu,
} from '../../bench/read-phase-probe.ts';

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
      serverGcTraced: false,
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

  it("reads a server process's GC pauses from its --trace-gc lines, and nothing else", () => {
    const scavenge =
      '[11187:0x1439c000]      226 ms: Scavenge 4.9 (6.0) -> 4.5 (7.0) MB, pooled: 0 MB, 4.16 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure; ';
    const full =
      '[11209:0x13cb3000]     1140 ms: Mark-Compact 98.6 (140.3) -> 68.9 (133.7) MB, pooled: 0 MB, 124.51 / 0.00 ms  (+ 0.0 ms in 0 steps since start of marking, biggest step 0.0 ms, walltime since start of marking 125 ms) (average mu = 0.890, current mu = 0.890) allocation failure; GC in old space requested';
    expect(parseGcLine(scavenge, 7)).toEqual({
      at: 7,
      v8Ms: 226,
      kind: 'Scavenge',
      ms: 4.16,
      major: false,
      beforeMb: 4.9,
      afterMb: 4.5,
      allocatedMb: 0,
      keptMb: 0,
    });
    expect(parseGcLine(full, 8)).toEqual({
      at: 8,
      v8Ms: 1140,
      kind: 'Mark-Compact',
      ms: 124.51,
      major: true,
      beforeMb: 98.6,
      afterMb: 68.9,
      allocatedMb: 0,
      keptMb: 0,
    });
    for (const other of [
      '{"level":40,"msg":"Scavenge 1.0 (2.0) -> 1.0 (2.0) MB, 3.00 / 0.00 ms"}',
      '',
      '[1:0x1] 1 ms: Scavenge',
      '__proto__',
      'x'.repeat(100_000),
    ])
      expect(parseGcLine(other, 0)).toBeUndefined();
  });

  it("prints an out-of-process server's GC pauses of the phase only", async () => {
    const stdout = new PassThrough();
    const trace = gcTrace(stdout);
    // Each line carries the server's own clock, here started 10 ms before this test's.
    const t0 = performance.now();
    const line = (ms: number, kind = 'Scavenge', after = 4) =>
      `[1:0xab]   ${10 + Math.round(performance.now() - t0)} ms: ${kind} ${(after + 1).toFixed(1)} (6.0) -> ${after.toFixed(1)} (7.0) MB, pooled: 0 MB, ${ms.toFixed(2)} / 0.00 ms  (average mu = 1.000) allocation failure;\n`;
    const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
    stdout.write(line(50)); // before the phase: not counted
    await settle();
    let cpu = 0;
    const stop = await observePhase(readings({ worker: 0 }), () => Promise.resolve((cpu += 1)), false, trace);
    await settle();
    // The second scavenge leaves the heap 0.5 MB larger than the first did: kept past a young collection.
    stdout.write('{"level":40,"msg":"not a pause"}\n' + line(2) + line(3, 'Scavenge', 4.5));
    // A full collection frees the old generation: it keeps nothing, whatever the heap after it.
    stdout.write(line(30, 'Mark-Compact', 4.7));
    await settle();
    const phase = await stop(0.1, 100);
    expect(phase).toMatchObject({
      serverGcTraced: true,
      gcPauses: 3,
      gcMsTotal: 35,
      gcMsMax: 30,
      gcMajor: 1,
      gcKeptMb: 0.5,
    });
    // Allocated since the previous line: 5.0 − 4.0 (the line before the phase), 5.5 − 4.0, then 5.7 − 4.5.
    expect(phase.gcAllocatedMb).toBeCloseTo(3.7, 9);
    expect(phaseLine(phase)).toContain('3 GC pauses, 35 ms in all');
    expect(phaseLine(phase)).toContain(
      '37.9 KB allocated a request between them, 5.12 KB of it kept past a young collection',
    );
    expect(phaseLine(phase)).toContain('longest 30.0 ms (1 full, 30 ms');
  });

  it("places a pause at its own time, not when its line, held in the server's output buffer, was read", async () => {
    const stdout = new PassThrough();
    const trace = gcTrace(stdout);
    const line = (v8Ms: number) =>
      `[1:0xab]   ${v8Ms} ms: Scavenge 5.0 (6.0) -> 4.0 (7.0) MB, pooled: 0 MB, 1.00 / 0.00 ms  (average mu = 1.000) task;\n`;
    stdout.write(line(1000));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const firstRead = performance.now();
    // The next pause ended 5 ms after the first, but its line arrives 100 ms later.
    await new Promise((resolve) => setTimeout(resolve, 100));
    stdout.write(line(1005));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const [first, second] = trace.since(0);
    expect(second!.at - first!.at).toBe(5);
    expect(first!.at).toBeLessThan(firstRead);
    // Asked from a moment between them, only the second counts.
    expect(trace.since(first!.at + 1)).toHaveLength(1);
  });
});
