/**
 * A service process's garbage-collection pauses, read from what `node --trace-gc` prints on its stdout: the
 * benchmark cannot observe another process's GC with perf_hooks, and these pauses stop every request in flight.
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';

export interface GcPause {
  /**
   * When the pause ended, on this process's clock (performance.now()). The server writes its lines through C's
   * stdio, which buffers a pipe by the block, so a line may be read long after its pause: the time is the line's
   * own (V8's milliseconds since the server's start), placed on this clock by the line read soonest after it.
   */
  at: number;
  /** The line's own time: V8's milliseconds since the server's isolate started, when the pause ended. */
  v8Ms: number;
  kind: string;
  /** The pause on the main thread, ms (the first figure of V8's "a / b ms"). */
  ms: number;
  /** A full (mark-compact) collection, whose pause grows with the heap. */
  major: boolean;
  /** The heap in use before and after it, MB. */
  beforeMb: number;
  afterMb: number;
  /**
   * What the server allocated since the previous pause, MB: the heap before this one less the heap after that one
   * (0 for the first line read). Its sum over a phase, over the phase's requests, is what each request allocated.
   */
  allocatedMb: number;
  /**
   * What the heap kept since the previous pause, MB: the heap after this scavenge less the heap after that pause
   * (0 for a full collection, which frees the old generation, and for the first line read). Over a phase it is what
   * outlived a young collection and moved to the old generation, where only a full collection frees it: a read
   * should leave next to nothing there.
   */
  keptMb: number;
}

// `[pid:0x…]   1234 ms: Scavenge 4.9 (6.0) -> 4.5 (7.0) MB, pooled: 0 MB, 4.16 / 0.00 ms  (average mu = …`
const LINE =
  /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: ([A-Za-z-]+(?: [A-Za-z-]+)*(?: \(\w+\))?) ([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/;

/** The pause a `--trace-gc` line reports, or undefined for any other line. */
export function parseGcLine(line: string, at: number): GcPause | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  const kind = m[2]!;
  return {
    at,
    v8Ms: Number(m[1]),
    kind,
    ms: Number(m[5]),
    major: kind.startsWith('Mark-Compact'),
    beforeMb: Number(m[3]),
    afterMb: Number(m[4]),
    allocatedMb: 0,
    keptMb: 0,
  };
}

/**
 * Collects the pauses `stdout` reports from now on; `since(at)` answers those that ended after `at` and have been
 * read by now, each `at` on this process's clock.
 */
export function gcTrace(stdout: Readable, maxKept = 100_000) {
  const pauses: GcPause[] = [];
  // This clock minus V8's: a line is read no sooner than its pause ended, so the smallest gap is the truest.
  let offset = Infinity;
  createInterface({ input: stdout, crlfDelay: Infinity }).on('line', (line) => {
    const pause = parseGcLine(line, performance.now());
    if (!pause) return;
    const previous = pauses.at(-1);
    if (previous) pause.allocatedMb = Math.max(0, pause.beforeMb - previous.afterMb);
    if (previous && !pause.major) pause.keptMb = Math.max(0, pause.afterMb - previous.afterMb);
    offset = Math.min(offset, pause.at - pause.v8Ms);
    if (pauses.length >= maxKept) pauses.shift();
    pauses.push(pause);
  });
  return {
    since: (at: number): GcPause[] =>
      pauses.map((p) => ({ ...p, at: p.v8Ms + offset })).filter((p) => p.at >= at),
  };
}
export type GcTrace = ReturnType<typeof gcTrace>;
