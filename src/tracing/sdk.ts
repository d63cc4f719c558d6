import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';

/**
 * The OpenTelemetry SDK of one process (API, worker, or both under `npm start`). Loaded only when tracing is on
 * (src/runtime/tracing.ts imports it on demand), so a process without OTEL_EXPORTER_OTLP_ENDPOINT never loads it.
 */
export interface Tracing {
  readonly serviceName: string;
  readonly tracer: Tracer;
  /** For the Temporal clients this process makes (StartWorkflow, updates, signals carry the trace). */
  readonly clientInterceptors: ClientInterceptors;
  /**
   * For the worker: the activity interceptors (RunActivity spans continue the workflow's trace), the worker's own
   * client (activities that start workflows), the workflow interceptor module the bundle must include, and the
   * sink through which workflow spans leave the sandbox.
   */
  readonly worker: Required<Pick<WorkerOptions, 'interceptors' | 'sinks'>>;
  /** The module of workflow interceptors, for `bundleWorkflowCode({ workflowInterceptorModules })`. */
  readonly workflowInterceptorModules: string[];
  /** Exports every span ended so far. */
  forceFlush(): Promise<void>;
  /** Exports what is left, then unregisters the SDK: the last step of the process's ordered shutdown. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  serviceName: string;
  serviceVersion?: string;
  /** Where spans go: the OTLP exporter in a deployment, an in-memory one in tests. */
  exporter: SpanExporter;
}

/**
 * The workflow side of tracing (RunWorkflow and StartActivity spans, made in the sandbox): ./workflow-interceptors.ts,
 * as source under tsx/vitest or compiled under dist/.
 */
export const WORKFLOW_INTERCEPTOR_MODULE = ((): string => {
  const ts = fileURLToPath(new URL('./workflow-interceptors.ts', import.meta.url));
  return existsSync(ts) ? ts : fileURLToPath(new URL('./workflow-interceptors.js', import.meta.url));
})();

/**
 * Starts tracing for this process: a tracer provider with a batching processor in front of `exporter`, registered
 * as the process's global provider with W3C trace context and an AsyncLocalStorage context manager (how a
 * span started by the Koa middleware reaches the Temporal client call made deep inside a route).
 */
export function startTracing(options: StartTracingOptions): Tracing {
  const resource = Resource.default().merge(
    new Resource({
      [ATTR_SERVICE_NAME]: options.serviceName,
      ...(options.serviceVersion ? { [ATTR_SERVICE_VERSION]: options.serviceVersion } : {}),
    }),
  );
  const processor = new BatchSpanProcessor(options.exporter);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  provider.register({
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new W3CTraceContextPropagator(),
  });
  const temporalTracer = provider.getTracer('@temporalio/interceptors-opentelemetry');
  const clientInterceptor = new OpenTelemetryWorkflowClientInterceptor({ tracer: temporalTracer });

  return {
    serviceName: options.serviceName,
    tracer: provider.getTracer('wathiq'),
    clientInterceptors: { workflow: [clientInterceptor] },
    worker: {
      interceptors: {
        client: { workflow: [clientInterceptor] },
        workflowModules: [WORKFLOW_INTERCEPTOR_MODULE],
        activity: [
          (ctx) => ({
            inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer: temporalTracer }),
            outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      // Workflow spans are made inside the sandbox and handed out here, through the same processor.
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    },
    workflowInterceptorModules: [WORKFLOW_INTERCEPTOR_MODULE],
    forceFlush: () => provider.forceFlush(),
    async shutdown() {
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        context.disable();
        propagation.disable();
      }
    },
  };
}

/**
 * The OTLP/HTTP (JSON) exporter for OTEL_EXPORTER_OTLP_ENDPOINT, the collector's base URL: spans are posted to
 * `{endpoint}/v1/traces`, as every OpenTelemetry SDK does with that variable. OTEL_EXPORTER_OTLP_HEADERS (an
 * API key for a hosted backend) is read by the exporter itself.
 */
export function otlpExporter(endpoint: string): SpanExporter {
  return new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
}
