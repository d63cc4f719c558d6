import { z } from 'zod';
import { defineSlice, type ConfigRole } from './slice.ts';

/** The service name traces carry when OTEL_SERVICE_NAME is unset: one per process role. */
export const DEFAULT_SERVICE_NAMES: Record<ConfigRole, string> = {
  all: 'wathiq',
  api: 'wathiq-api',
  worker: 'wathiq-worker',
};

export interface TracingConfig {
  /** OpenTelemetry tracing; absent (no SDK, no spans) unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing?: {
    /** The collector's OTLP/HTTP base URL; spans go to `{endpoint}/v1/traces`. */
    endpoint: string;
    /** OTEL_SERVICE_NAME, or wathiq-api / wathiq-worker / wathiq by role. */
    serviceName: string;
  };
}

export const tracingSlice = defineSlice({
  title: 'Tracing',
  about:
    'OpenTelemetry over OTLP/HTTP, off unless the endpoint is set. OTEL_EXPORTER_OTLP_HEADERS is read by the exporter itself, e.g. api-key=... for a hosted backend.',
  env: {
    OTEL_EXPORTER_OTLP_ENDPOINT: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe(
        "an OTLP/HTTP collector's base URL (e.g. http://127.0.0.1:4318); spans go to {endpoint}/v1/traces",
      ),
    OTEL_SERVICE_NAME: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9._-]{1,128}$/, 'a service name (letters, digits, . _ -)')
      .optional()
      .describe('the service name spans carry'),
  },
  derivedDefaults: {
    OTEL_EXPORTER_OTLP_ENDPOINT: 'off: no tracing SDK is loaded and nothing is exported',
    OTEL_SERVICE_NAME: 'wathiq-api, wathiq-worker, or wathiq (npm start) by process role',
  },
  build: (e, ctx): TracingConfig =>
    e.OTEL_EXPORTER_OTLP_ENDPOINT
      ? {
          tracing: {
            endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''),
            serviceName: e.OTEL_SERVICE_NAME ?? DEFAULT_SERVICE_NAMES[ctx.role],
          },
        }
      : {},
});
