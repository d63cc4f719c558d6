import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { shutdownStep, stopInReverse } from '../../src/runtime/shutdown.ts';

/** The ordered shutdown behind SIGTERM: reverse order, failures logged, a hung step abandoned at the deadline. */

function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(
    { logLevel: 'info' },
    {},
    { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  );
  return { logger, lines };
}

const never = () => new Promise<void>(() => undefined);

describe('stopInReverse', () => {
  it('runs the steps last-started first and answers stopped', async () => {
    const { logger } = recordingLogger();
    const ran: string[] = [];
    const step = (name: string) => shutdownStep(name, () => Promise.resolve(void ran.push(name)));
    expect(
      await stopInReverse([step('postgres'), step('worker'), step('api')], { timeoutMs: 1_000, logger }),
    ).toBe('stopped');
    expect(ran).toEqual(['api', 'worker', 'postgres']);
  });

  it('logs a step that throws, with its name, and runs the next', async () => {
    const { logger, lines } = recordingLogger();
    const ran: string[] = [];
    const outcome = await stopInReverse(
      [
        shutdownStep('postgres', () => Promise.resolve(void ran.push('postgres'))),
        shutdownStep('worker', () => Promise.reject(new Error('connection gone'))),
      ],
      { timeoutMs: 1_000, logger },
    );
    expect(outcome).toBe('stopped');
    expect(ran).toEqual(['postgres']);
    expect(lines.map((l) => [l.msg, l.step, (l.err as { message?: string } | undefined)?.message])).toEqual([
      ['shutdown step failed', 'worker', 'connection gone'],
    ]);
  });

  it('abandons a step still running at the deadline, names it, and still runs the steps after it', async () => {
    const { logger, lines } = recordingLogger();
    const ran: string[] = [];
    const started = Date.now();
    const outcome = await stopInReverse(
      [
        shutdownStep('embedded servers', () => Promise.resolve(void ran.push('embedded servers'))),
        shutdownStep('stuck after', never),
        shutdownStep('worker', never),
        shutdownStep('api', () => Promise.resolve(void ran.push('api'))),
      ],
      { timeoutMs: 200, logger, afterDeadlineStepMs: 50 },
    );
    expect(outcome).toBe('timed out');
    expect(ran).toEqual(['api', 'embedded servers']);
    expect(lines.map((l) => [l.msg, l.step])).toEqual([
      ['shutdown step still running at the deadline (SHUTDOWN_TIMEOUT_SECONDS): abandoned', 'worker'],
      ['shutdown step still running at the deadline (SHUTDOWN_TIMEOUT_SECONDS): abandoned', 'stuck after'],
    ]);
    // The deadline, then one short allowance for the step after it; not the hung step's own time.
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
