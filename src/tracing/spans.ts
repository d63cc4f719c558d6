import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';

/**
 * Spans of our own code, written against the OpenTelemetry API only. Until a process starts tracing
 * (src/tracing/sdk.ts, when OTEL_EXPORTER_OTLP_ENDPOINT is set) the API's tracer is a no-op: these calls cost a
 * function call and record nothing, and no SDK is loaded.
 */
export const TRACER_NAME = 'wathiq';

const tracer = () => trace.getTracer(TRACER_NAME);

/**
 * Runs `work` inside a CLIENT span for one outbound HTTP call (a WhatsApp Cloud API send, a webhook POST). Only
 * what `attributes` names is recorded: never a URL's path or query, a body, or a header. No trace context is
 * sent with the request: the receivers are Meta and our customers, who have no use for our trace ids.
 * `work` sets the outcome's attributes on the span; a thrown error marks it failed.
 */
export function clientSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
      throw err;
    } finally {
      span.end();
    }
  });
}

/**
 * Runs `work` in no trace: for something a request only sets going, that outlives it and belongs to no request
 * (the webhook outbox sweep, started by whichever dispatch of a process comes first). Its spans start a trace of
 * their own instead of hanging, unfinished, in the trace of the request that happened to be first.
 */
export function outsideTrace<T>(work: () => T): T {
  return context.with(ROOT_CONTEXT, work);
}

/** The outcome of an HTTP call on its span: the status code, and an error type when it failed. */
export function recordHttpOutcome(span: Span, outcome: { status?: number; errorType?: string }): void {
  if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
  if (outcome.errorType !== undefined) {
    span.setAttribute('error.type', outcome.errorType);
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** `server.address` and `server.port` of a URL, the only parts of it a span records. */
export function serverAttributes(url: string | URL): Attributes {
  const u = typeof url === 'string' ? new URL(url) : url;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { 'server.address': u.hostname, 'server.port': port };
}
