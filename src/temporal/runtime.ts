import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger.ts';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

export interface TemporalRuntimeOptions {
  /**
   * Where the SDK's own Prometheus exporter listens (`127.0.0.1:<port>`): worker task slots, poll and
   * schedule-to-start latencies, sticky cache. The process's metrics endpoint reads it and appends it to its own
   * (src/metrics/server.ts), so each process is one scrape target. Unset: the SDK exports no metrics.
   */
  prometheusBindAddress?: string;
}

/**
 * The Temporal SDK runtime, once per process: its logs go to our logger (warnings and up), and it installs no
 * signal handlers, so Ctrl-C runs our own ordered shutdown instead of stopping the worker behind our back.
 */
export function installTemporalRuntime(
  logger: Logger,
  level: LogLevel = 'WARN',
  options: TemporalRuntimeOptions = {},
): void {
  Runtime.install({
    shutdownSignals: [],
    logger: new DefaultLogger(level, (entry) => {
      logger[LEVELS[entry.level]]({ temporal: entry.meta }, entry.message);
    }),
    ...(options.prometheusBindAddress && {
      telemetryOptions: {
        metrics: {
          // Prometheus conventions: counters end in _total, durations are histograms in seconds named so.
          prometheus: {
            bindAddress: options.prometheusBindAddress,
            countersTotalSuffix: true,
            unitSuffix: true,
            useSecondsForDurations: true,
          },
        },
      },
    }),
  });
}
