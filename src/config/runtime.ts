import path from 'node:path';
import { z } from 'zod';
import { intIn } from './fields.ts';
import { defineSlice } from './slice.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface RuntimeConfig {
  env: 'development' | 'test' | 'production';
  logLevel: LogLevel;
  /** DATA_DIR, resolved. */
  dataDir: string;
  /**
   * How long a SIGTERM's ordered shutdown may take before the process exits anyway (status 1), naming the step it
   * waited on. The worker lets in-flight activities finish for half of it, then cancels them.
   */
  shutdownTimeoutMs: number;
}

export const runtimeSlice = defineSlice({
  title: 'Runtime',
  env: {
    NODE_ENV: z
      .enum(['development', 'test', 'production'])
      .default('development')
      .describe(
        'development | test | production. production refuses the development conveniences (the console WhatsApp provider, the self-signed certificate, the development encryption key) and what is unsafe, naming the variable',
      ),
    LOG_LEVEL: z
      .enum(LOG_LEVELS)
      .default('info')
      .describe('fatal | error | warn | info | debug | trace | silent: the pino level; logs are JSON lines'),
    DATA_DIR: z
      .string()
      .default('./data')
      .describe(
        'embedded PostgreSQL, Temporal dev state, local file storage, the page assets compressed at start-up when not built',
      ),
    SHUTDOWN_TIMEOUT_SECONDS: intIn(5, 3_600)
      .default(25)
      .describe(
        "after SIGTERM or SIGINT: in-flight requests and activities finish (activities for half of it, then they are cancelled), and the process exits anyway when this runs out, naming the step it waited on. Keep it under the orchestrator's grace period (Kubernetes: 30 s)",
      ),
  },
  build: (e, ctx): RuntimeConfig => ({
    env: e.NODE_ENV,
    logLevel: e.LOG_LEVEL,
    dataDir: ctx.dataDir,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000,
  }),
});

export const resolveDataDir = (dataDir: string): string => path.resolve(dataDir);
