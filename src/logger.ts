import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';

export type { Logger };

/** Structured JSON logs (pino): cheap on the hot path and readable by any log pipeline. */
export function createLogger(
  config: Pick<Config, 'logLevel'>,
  bindings: Record<string, unknown> = {},
): Logger {
  return pino({
    level: config.logLevel,
    base: { service: 'wathiq', ...bindings },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.password', '*.api_secret', '*.secret'],
      censor: '[redacted]',
    },
  });
}
