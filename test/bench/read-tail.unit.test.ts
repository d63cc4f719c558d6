import { describe, expect, it } from 'vitest';
import { readTail, tailLine } from '../../bench/read-tail.ts';

describe("bench:lifecycle's read tail", () => {
  // 100 reads, one every 10 ms, each 5 ms long, but reads 40 and 70 took 50 ms.
  const startedAt = Array.from({ length: 100 }, (_, i) => 1_000 + i * 10);
  const latencies = startedAt.map((_, i) => (i === 40 || i === 70 ? 50 : 5));

  it('counts the slowest 1 % that overlapped a pause of the server or of the driver, and all reads that did', () => {
    // A server pause across read 40 (starts at 1,400 ms) only; a driver pause inside read 70's 50 ms only.
    const tail = readTail(
      startedAt,
      latencies,
      [{ start: 1_402, end: 1_404 }],
      [{ start: 1_740, end: 1_742 }],
    );
    expect(tail.thresholdMs).toBe(50);
    expect(tail.slow).toBe(2);
    expect(tail.slowOverServerGc).toBe(1);
    expect(tail.slowOverDriverGc).toBe(1);
    expect(tail.allOverServerGc).toBe(1);
    // Read 70 runs 1,700–1,750 and read 74 runs 1,740–1,745: both meet the driver's pause.
    expect(tail.allOverDriverGc).toBe(2);
    expect(tail.slowWithoutGcMeanMs).toBeNaN();
    expect(tailLine(tail)).toContain(
      'the slowest 1% (2 reads of ≥ 50.0 ms): 50% overlapped a GC pause of the server',
    );
  });

  it('a pause that ends before a read starts, or starts after it ends, is not counted', () => {
    const tail = readTail(
      startedAt,
      latencies,
      [{ start: 1_395, end: 1_400 }],
      [{ start: 1_750, end: 1_751 }],
    );
    expect(tail.slowOverServerGc).toBe(0);
    // Read 39 ran 1,390–1,395: the pause began as it ended.
    expect(tail.allOverServerGc).toBe(0);
    expect(tail.slowOverDriverGc).toBe(0);
    expect(tail.slowWithoutGcMeanMs).toBe(50);
  });
});
