import path from 'node:path';
import { z } from 'zod';
import { defineSlice } from './slice.ts';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface RuntimeConfig {
  env: 'development' | 'test' | 'production';
  logLevel: LogLevel;
  /** DATA_DIR, resolved. */
  dataDir: string;
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
  },
  build: (e, ctx): RuntimeConfig => ({ env: e.NODE_ENV, logLevel: e.LOG_LEVEL, dataDir: ctx.dataDir }),
});

export const resolveDataDir = (dataDir: string): string => path.resolve(dataDir);
