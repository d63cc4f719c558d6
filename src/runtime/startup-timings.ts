/**
 * When each step of a start was reached, in milliseconds since the process began (`performance.now()` counts from
 * the process's time origin). src/main.ts logs them once everything is up (`startup timings`, at info);
 * `npm run bench:start` reads that line to print where a start's seconds go.
 */
const marks: Record<string, number> = {};

/** Records the first time `step` is reached; later calls keep the first. */
export function markStartup(step: string): void {
  marks[step] ??= Math.round(performance.now());
}

/** The steps reached so far, in the order they were reached. */
export function startupTimings(): Record<string, number> {
  return Object.fromEntries(Object.entries(marks).sort(([, a], [, b]) => a - b));
}
