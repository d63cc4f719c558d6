import { z } from 'zod';
import { defineSlice, type LoadContext, type SliceEnv } from './slice.ts';

/** The metrics port when NODE_ENV=production and METRICS_PORT is unset (OpenTelemetry's Prometheus default). */
export const DEFAULT_METRICS_PORT = 9464;

export interface MetricsConfig {
  /**
   * The Prometheus endpoint (`GET /metrics`) of this process, on its own server; undefined when off (the default
   * outside production). Port 0 takes any free port (tests).
   */
  metrics?: {
    host: string;
    port: number;
    /** How long a count of documents by status is reused between scrapes. */
    documentsCacheMs: number;
  };
}

const env = {
  METRICS_PORT: z
    .string()
    .trim()
    .regex(/^(off|\d{1,5})$/, 'a port number (0: any free port), or off')
    .transform((v) => (v === 'off' ? ('off' as const) : Number(v)))
    .pipe(z.union([z.literal('off'), z.number().int().min(0).max(65535)]))
    .optional()
    .describe('the port of the metrics endpoint; off turns it off; 0: any free port'),
  METRICS_HOST: z
    .string()
    .trim()
    .min(1)
    .default('127.0.0.1')
    .describe(
      "loopback by default; 0.0.0.0 in a container or for a Prometheus on another host (no authentication: never publish it beyond the scraper's network)",
    ),
  METRICS_DOCUMENTS_CACHE_SECONDS: z.coerce
    .number()
    .min(0)
    .max(3600)
    .default(15)
    .describe('documents by status are counted in PostgreSQL at most once per this many seconds'),
};

const metricsPort = (e: SliceEnv<typeof env>, ctx: LoadContext) =>
  e.METRICS_PORT ?? (ctx.nodeEnv === 'production' ? DEFAULT_METRICS_PORT : 'off');

export const metricsSlice = defineSlice({
  title: 'Metrics',
  about: 'A Prometheus endpoint, GET /metrics, on its own port in each process (docs/operations.md).',
  env,
  derivedDefaults: { METRICS_PORT: `${DEFAULT_METRICS_PORT} when NODE_ENV=production, off otherwise` },
  checks: {
    ports: (e, ctx) => {
      const port = metricsPort(e, ctx);
      return port !== 'off' && port !== 0 && port === ctx.port && ctx.role !== 'worker'
        ? [`METRICS_PORT: ${port} is the API's PORT; the metrics endpoint needs a port of its own`]
        : [];
    },
  },
  build: (e, ctx): MetricsConfig => {
    const port = metricsPort(e, ctx);
    return port === 'off'
      ? {}
      : {
          metrics: {
            host: e.METRICS_HOST,
            port,
            documentsCacheMs: Math.round(e.METRICS_DOCUMENTS_CACHE_SECONDS * 1000),
          },
        };
  },
});
