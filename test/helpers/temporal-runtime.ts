import { Runtime } from '@temporalio/worker';
import { createLogger, type Logger } from '../../src/logger.ts';
import { installTemporalRuntime } from '../../src/temporal/runtime.ts';

/**
 * The Temporal SDK runtime of this test process, installed by the first test file that needs one: integration files
 * share their worker process (vitest's `isolate: false`), and the SDK allows one runtime per process. Its log lines
 * (warnings and up) go to `logger`, silent unless given.
 */
export function ensureTestTemporalRuntime(logger: Logger = createLogger({ logLevel: 'silent' })): void {
  if (Runtime._instance) return;
  installTemporalRuntime(logger);
}
