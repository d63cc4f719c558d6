/**
 * What the slowest reads of a phase met. With 50 closed-loop connections a pause in the server stops every request
 * in flight, and a pause in the driver delays every answer it has not yet read: each read is lined up against the
 * pauses of both processes (their times in epoch ms, comparable across the machine's processes), so the share of
 * the slowest 1 % that overlapped a pause, against the share of all reads, says how much of the p99 they make.
 */

/** A stretch of time, epoch ms. */
export interface Span {
  start: number;
  end: number;
}

export interface TailFigures {
  requests: number;
  /** The latency from which a read is among the slowest 1 % (the p99). */
  thresholdMs: number;
  slow: number;
  /** Of the slowest, those that overlapped a pause of the server / of the driver. */
  slowOverServerGc: number;
  slowOverDriverGc: number;
  /** Of all reads, the same. */
  allOverServerGc: number;
  allOverDriverGc: number;
  /** Mean latency of the slowest that overlapped neither. */
  slowWithoutGcMeanMs: number;
}

const overlaps = (start: number, end: number, spans: readonly Span[]) =>
  spans.some((s) => s.start < end && s.end > start);

export function readTail(
  startedAt: readonly number[],
  latencies: readonly number[],
  serverGc: readonly Span[],
  driverGc: readonly Span[],
): TailFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  const thresholdMs = sorted[Math.max(0, Math.ceil(0.99 * sorted.length) - 1)] ?? NaN;
  const figures: TailFigures = {
    requests: latencies.length,
    thresholdMs,
    slow: 0,
    slowOverServerGc: 0,
    slowOverDriverGc: 0,
    allOverServerGc: 0,
    allOverDriverGc: 0,
    slowWithoutGcMeanMs: 0,
  };
  let withoutGcMs = 0;
  let withoutGc = 0;
  latencies.forEach((ms, i) => {
    const start = startedAt[i]!;
    const server = overlaps(start, start + ms, serverGc);
    const driver = overlaps(start, start + ms, driverGc);
    if (server) figures.allOverServerGc++;
    if (driver) figures.allOverDriverGc++;
    if (ms < thresholdMs) return;
    figures.slow++;
    if (server) figures.slowOverServerGc++;
    if (driver) figures.slowOverDriverGc++;
    if (!server && !driver) {
      withoutGc++;
      withoutGcMs += ms;
    }
  });
  figures.slowWithoutGcMeanMs = withoutGc ? withoutGcMs / withoutGc : NaN;
  return figures;
}

const share = (n: number, of: number) => `${((100 * n) / Math.max(1, of)).toFixed(0)}%`;

export function tailLine(t: TailFigures): string {
  return (
    `      the slowest 1% (${t.slow} reads of ≥ ${t.thresholdMs.toFixed(1)} ms): ${share(t.slowOverServerGc, t.slow)} ` +
    `overlapped a GC pause of the server, ${share(t.slowOverDriverGc, t.slow)} one of the driver (of all reads ` +
    `${share(t.allOverServerGc, t.requests)} and ${share(t.allOverDriverGc, t.requests)}); those that overlapped ` +
    `neither took ${t.slowWithoutGcMeanMs.toFixed(1)} ms on average`
  );
}
