import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger.ts';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * The Temporal SDK runtime, once per process: its logs go to our logger (warnings and up), and it installs no
 * signal handlers, so Ctrl-C runs our own ordered shutdown instead of stopping the worker behind our back.
 */
export function installTemporalRuntime(logger: Logger, level: LogLevel = 'WARN'): void {
  Runtime.install({
    shutdownSignals: [],
    logger: new DefaultLogger(level, (entry) => {
      logger[LEVELS[entry.level]]({ temporal: entry.meta }, entry.message);
    }),
  });
}
