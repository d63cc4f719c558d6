import type { Logger } from '../logger.ts';

/** One step of a process's ordered shutdown, named for the log when it fails or hangs. */
export interface ShutdownStep {
  name: string;
  run(): Promise<void>;
}

export const shutdownStep = (name: string, run: () => Promise<void>): ShutdownStep => ({ name, run });

/** How long each step after a hung one gets: the embedded servers' stops, which must not be skipped. */
export const AFTER_DEADLINE_STEP_MS = 5_000;

/**
 * Runs the steps in reverse order of their start, one at a time, within `timeoutMs` in all. A step that fails is
 * logged and the next runs. A step still running at the deadline is abandoned (logged, with its name): the steps
 * after it still run, AFTER_DEADLINE_STEP_MS each at most, so embedded PostgreSQL and the dev server are stopped
 * rather than orphaned. Resolves `stopped`, or `timed out` when any step was abandoned (the caller exits 1).
 */
export async function stopInReverse(
  steps: readonly ShutdownStep[],
  options: { timeoutMs: number; logger: Logger; afterDeadlineStepMs?: number },
): Promise<'stopped' | 'timed out'> {
  const { logger } = options;
  const deadline = Date.now() + options.timeoutMs;
  let outcome: 'stopped' | 'timed out' = 'stopped';
  for (const step of [...steps].reverse()) {
    const allowance =
      outcome === 'stopped' ? deadline - Date.now() : (options.afterDeadlineStepMs ?? AFTER_DEADLINE_STEP_MS);
    const result = await within(step.run(), Math.max(allowance, 0));
    if (typeof result === 'object') {
      logger.error({ err: result.err, step: step.name }, 'shutdown step failed');
    } else if (result === 'late') {
      logger.error(
        { step: step.name, timeoutMs: options.timeoutMs },
        'shutdown step still running at the deadline (SHUTDOWN_TIMEOUT_SECONDS): abandoned',
      );
      outcome = 'timed out';
    }
  }
  return outcome;
}

/** The step's end within `ms`: `done`, `{ err }` when it threw, or `late`. */
async function within(running: Promise<void>, ms: number): Promise<'done' | 'late' | { err: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    return await Promise.race([
      running.then(
        () => 'done' as const,
        (err: unknown) => ({ err }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
