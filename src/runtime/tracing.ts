import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config.ts';
import type { Tracing } from '../tracing/sdk.ts';

/**
 * Tracing for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set, otherwise undefined: then the SDK is not even
 * loaded, the API has no tracing middleware, the worker's bundle holds no workflow interceptor, and the spans of
 * src/tracing/spans.ts are the OpenTelemetry API's no-ops. `exporter` replaces the OTLP exporter (tests).
 */
export async function startTracingFromConfig(
  config: Pick<Config, 'tracing'>,
  overrides: { exporter?: SpanExporter } = {},
): Promise<Tracing | undefined> {
  if (!config.tracing) return undefined;
  const { otlpExporter, startTracing } = await import('../tracing/sdk.ts');
  return startTracing({
    serviceName: config.tracing.serviceName,
    exporter: overrides.exporter ?? otlpExporter(config.tracing.endpoint),
  });
}
