/**
 * When each step of a start was reached, in milliseconds since the process began (`performance.now()` counts from
 * the process's time origin), and how much CPU time the process had used by then (user and system; on a busy
 * machine the wall time stretches, the CPU time hardly). src/main.ts logs them once everything is up
 * (`startup timings`, at info); `npm run bench:start` reads that line to print where a start's seconds go.
 */
const marks: Record<string, { ms: number; cpuMs: number }> = {};

/** Records the first time `step` is reached; later calls keep the first. */
export function markStartup(step: string): void {
  const cpu = process.cpuUsage();
  marks[step] ??= { ms: Math.round(performance.now()), cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
}

/** The steps reached so far, in the order they were reached: wall and CPU milliseconds since the process began. */
export function startupTimings(): {
  startup_ms: Record<string, number>;
  startup_cpu_ms: Record<string, number>;
} {
  const steps = Object.entries(marks).sort(([, a], [, b]) => a.ms - b.ms);
  return {
    startup_ms: Object.fromEntries(steps.map(([step, { ms }]) => [step, ms])),
    startup_cpu_ms: Object.fromEntries(steps.map(([step, { cpuMs }]) => [step, cpuMs])),
  };
}
