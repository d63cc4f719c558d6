/**
 * The workflow interceptors of tracing, for the workflow bundle only (the worker's bundler loads this module into
 * Temporal's sandbox; nothing in Node imports it). They make the spans @temporalio/interceptors-opentelemetry's
 * would (RunWorkflow, StartActivity, HandleSignal, ValidateUpdate, HandleUpdate, HandleQuery, ...) and send
 * them out through the same sink (`makeWorkflowExporter` in src/tracing/sdk.ts), but are written so that
 * switching tracing on or off can never change what the workflow does, and so never makes a running workflow
 * nondeterministic:
 *
 * - **No promise turns.** Every intercepted call starts its span synchronously, calls `next` inside it, and
 *   returns the very promise `next` returned; the span is ended by a reaction attached on the side. The
 *   package's methods are `async` and `await` that promise, which settles what the workflow observes (an
 *   update's completion, an activity's result) a few microtasks later than without the interceptor, behind
 *   commands the workflow issues meanwhile: a history recorded one way then fails to replay the other way.
 * - **No draw on the workflow's random numbers.** Inside the sandbox `Math.random` is the workflow's seeded,
 *   replayed generator (what `uuid4()` reads); the OpenTelemetry SDK's default id generator would take from it
 *   on every span. Span and trace ids here are a hash of the run id, the task's time and a counter instead.
 * - **No SDK flags.** The package asks `hasFlag(...)`, which writes flags into the history; nothing here does.
 *
 * The only thing that reaches a command is the `_tracer-data` header on scheduled activities, local activities,
 * child workflows, external signals and continue-as-new. Replay does not compare headers: sdk-core matches an
 * ActivityTaskScheduled event to the command by activity id and type only (its activity state machine), so an
 * activity scheduled with or without the header matches the same event. test/tracing/toggle-replay.test.ts
 * proves it for what our workflows issue (activities, local activities, search attributes, timers, update
 * completions), both ways; our workflows start no child workflows and signal no others, and continue-as-new
 * (the webhook queue's after 5,000 events, the outbox sweep's) is not among the paths that test drives.
 */
import '@temporalio/interceptors-opentelemetry/lib/workflow/runtime.js'; // performance/window for the SDK
import * as otel from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import {
  extractContextFromHeaders,
  headersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import { ContextManager } from '@temporalio/interceptors-opentelemetry/lib/workflow/context-manager.js';
import { SpanName, SPAN_DELIMITER } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions.js';
import { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter.js';
import {
  ContinueAsNew,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type DisposeInput,
  type GetLogAttributesInput,
  type LocalActivityInput,
  type Next,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** Ids from the run id, the task's (replayed) time and a counter: never from the workflow's `Math.random`. */
class RunScopedIds implements IdGenerator {
  private counter = 0;
  generateTraceId = (): string => this.hex(4);
  generateSpanId = (): string => this.hex(2);

  private hex(words: number): string {
    const seed = `${workflowInfo().runId}/${Date.now()}/${++this.counter}`;
    let out = '';
    for (let w = 0; w < words; w++) out += (murmur(seed, w + 1) >>> 0).toString(16).padStart(8, '0');
    // All zeros is an invalid id; practically unreachable, but never emit one.
    return /^0+$/.test(out) ? `${out.slice(0, -1)}1` : out;
  }
}

/** MurmurHash3's 32-bit mixing of a string under a seed. */
function murmur(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h ^= k;
    h = Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64;
  }
  h ^= text.length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

let tracer: otel.Tracer | undefined;
let contextManager: ContextManager | undefined;

function getTracer(): otel.Tracer {
  contextManager ??= new ContextManager();
  if (!tracer) {
    const provider = new BasicTracerProvider({
      idGenerator: new RunScopedIds(),
      spanProcessors: [new SimpleSpanProcessor(new SpanExporter())],
    });
    provider.register({ contextManager });
    tracer = provider.getTracer('@temporalio/interceptor-workflow');
  }
  return tracer;
}

const spanName = (kind: SpanName, what: string) => `${kind}${SPAN_DELIMITER}${what}`;

function markFailed(span: otel.Span, err: unknown, acceptable?: (err: unknown) => boolean): void {
  if (acceptable?.(err)) {
    span.setStatus({ code: otel.SpanStatusCode.OK });
    return;
  }
  const benign = err instanceof ApplicationFailure && err.category === ApplicationFailureCategory.BENIGN;
  const message = err instanceof Error ? err.message : String(err);
  span.setStatus({ code: benign ? otel.SpanStatusCode.UNSET : otel.SpanStatusCode.ERROR, message });
  if (err instanceof Error) span.recordException(err);
}

interface SpanOptions {
  /** The caller's trace, from the call's headers; otherwise the active span (the workflow's, for outbound). */
  parent?: otel.Context | undefined;
  attributes?: otel.Attributes;
  /** Errors that end the span as OK (ContinueAsNew). */
  acceptable?: (err: unknown) => boolean;
}

/**
 * Runs `call` inside a new span and returns exactly what `call` returned: the span ends by a reaction attached
 * beside the workflow's own, so nothing the workflow awaits settles a single microtask later than without it.
 */
function traced<T>(name: string, options: SpanOptions, call: () => Promise<T>): Promise<T> {
  const parent = options.parent ?? otel.context.active();
  const span = getTracer().startSpan(name, { attributes: options.attributes ?? {} }, parent);
  let result: Promise<T>;
  try {
    result = otel.context.with(otel.trace.setSpan(parent, span), call);
  } catch (err) {
    markFailed(span, err, options.acceptable);
    span.end();
    throw err;
  }
  // The reactions' own promise always fulfils (nothing here throws), so it can never be an unhandled rejection.
  result.then(
    () => {
      span.setStatus({ code: otel.SpanStatusCode.OK });
      span.end();
    },
    (err: unknown) => {
      markFailed(span, err, options.acceptable);
      span.end();
    },
  );
  return result;
}

/** The synchronous form, for update validators: the span ends before the validator's answer is returned. */
function tracedSync<T>(name: string, options: SpanOptions, call: () => T): T {
  const parent = options.parent ?? otel.context.active();
  const span = getTracer().startSpan(name, { attributes: options.attributes ?? {} }, parent);
  try {
    const value = otel.context.with(otel.trace.setSpan(parent, span), call);
    span.setStatus({ code: otel.SpanStatusCode.OK });
    return value;
  } catch (err) {
    markFailed(span, err, options.acceptable);
    throw err;
  } finally {
    span.end();
  }
}

const isContinueAsNew = (err: unknown) => err instanceof ContinueAsNew;

class TracingInboundInterceptor implements WorkflowInboundCallsInterceptor {
  execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
    return traced(
      spanName(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType),
      { parent: extractContextFromHeaders(input.headers), acceptable: isContinueAsNew },
      () => next(input),
    );
  }

  handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
    return traced(
      spanName(SpanName.WORKFLOW_HANDLE_SIGNAL, input.signalName),
      { parent: extractContextFromHeaders(input.headers) },
      () => next(input),
    );
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    tracedSync(
      spanName(SpanName.WORKFLOW_VALIDATE_UPDATE, input.name),
      {
        parent: extractContextFromHeaders(input.headers),
        attributes: { [UPDATE_ID_ATTR_KEY]: input.updateId },
      },
      () => next(input),
    );
  }

  handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    return traced(
      spanName(SpanName.WORKFLOW_HANDLE_UPDATE, input.name),
      {
        parent: extractContextFromHeaders(input.headers),
        attributes: { [UPDATE_ID_ATTR_KEY]: input.updateId },
      },
      () => next(input),
    );
  }

  handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
    return traced(
      spanName(SpanName.WORKFLOW_HANDLE_QUERY, input.queryName),
      { parent: extractContextFromHeaders(input.headers) },
      () => next(input),
    );
  }
}

class TracingOutboundInterceptor implements WorkflowOutboundCallsInterceptor {
  scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
    return traced(spanName(SpanName.ACTIVITY_START, input.activityType), {}, () =>
      next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ) {
    return traced(spanName(SpanName.ACTIVITY_START, input.activityType), {}, () =>
      next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ) {
    return traced(spanName(SpanName.CHILD_WORKFLOW_START, input.workflowType), {}, () =>
      next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
    return traced(
      spanName(SpanName.CONTINUE_AS_NEW, input.options.workflowType),
      { acceptable: isContinueAsNew },
      () => next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>) {
    return traced(spanName(SpanName.WORKFLOW_SIGNAL, input.signalName), {}, () =>
      next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  getLogAttributes(
    input: GetLogAttributesInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>,
  ): Record<string, unknown> {
    const spanContext = otel.trace.getSpan(otel.context.active())?.spanContext();
    if (!spanContext || !otel.isSpanContextValid(spanContext)) return next(input);
    return next({
      trace_id: spanContext.traceId,
      span_id: spanContext.spanId,
      trace_flags: `0${spanContext.traceFlags.toString(16)}`,
      ...input,
    });
  }
}

class TracingInternalsInterceptor implements WorkflowInternalsInterceptor {
  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>): void {
    contextManager?.disable();
    next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => {
  // Registers the provider, and with it the propagator that reads the caller's trace from the headers, before
  // the first call is intercepted.
  getTracer();
  return {
    inbound: [new TracingInboundInterceptor()],
    outbound: [new TracingOutboundInterceptor()],
    internals: [new TracingInternalsInterceptor()],
  };
};
