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
  /**
   * The worker's health endpoint (`GET /health`) on its own small server, in roles that run the worker; undefined
   * when off (the default). Port 0 takes any free port.
   */
  workerHealth?: { host: string; port: number };
}

/** A port of an endpoint of its own (metrics, the worker's health): a number (0: any free port), or `off`. */
const portOrOff = z
  .string()
  .trim()
  .regex(/^(off|\d{1,5})$/, 'a port number (0: any free port), or off')
  .transform((v) => (v === 'off' ? ('off' as const) : Number(v)))
  .pipe(z.union([z.literal('off'), z.number().int().min(0).max(65535)]));

const env = {
  METRICS_PORT: portOrOff
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
    .describe(
      'documents by status, and the approval signals not yet delivered, are read from PostgreSQL at most once per this many seconds each',
    ),
  WORKER_HEALTH_PORT: portOrOff
    .default('off')
    .describe(
      "the worker's GET /health: 200 while the worker runs, polls and reaches Temporal, 503 otherwise; 0: any free port",
    ),
  WORKER_HEALTH_HOST: z
    .string()
    .trim()
    .min(1)
    .default('127.0.0.1')
    .describe("loopback suits a container's own health check; 0.0.0.0 for a probe from outside"),
};

const metricsPort = (e: SliceEnv<typeof env>, ctx: LoadContext) =>
  e.METRICS_PORT ?? (ctx.nodeEnv === 'production' ? DEFAULT_METRICS_PORT : 'off');

export const metricsSlice = defineSlice({
  title: "Metrics and the worker's health endpoint",
  about:
    "A Prometheus endpoint, GET /metrics, on its own port in each process, and the worker's GET /health on another (docs/operations.md).",
  env,
  derivedDefaults: { METRICS_PORT: `${DEFAULT_METRICS_PORT} when NODE_ENV=production, off otherwise` },
  checks: {
    ports: (e, ctx) => {
      const port = metricsPort(e, ctx);
      const health = e.WORKER_HEALTH_PORT;
      return [
        ...(port !== 'off' && port !== 0 && port === ctx.port && ctx.role !== 'worker'
          ? [`METRICS_PORT: ${port} is the API's PORT; the metrics endpoint needs a port of its own`]
          : []),
        ...(health !== 'off' && health !== 0 && health === port
          ? [`WORKER_HEALTH_PORT: ${health} is METRICS_PORT; the health endpoint needs a port of its own`]
          : []),
      ];
    },
  },
  build: (e, ctx): MetricsConfig => {
    const port = metricsPort(e, ctx);
    const health = e.WORKER_HEALTH_PORT;
    return {
      ...(port !== 'off' && {
        metrics: {
          host: e.METRICS_HOST,
          port,
          documentsCacheMs: Math.round(e.METRICS_DOCUMENTS_CACHE_SECONDS * 1000),
        },
      }),
      ...(health !== 'off' && { workerHealth: { host: e.WORKER_HEALTH_HOST, port: health } }),
    };
  },
});
