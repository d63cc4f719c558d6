/**
 * The workflow interceptors of tracing, for the workflow bundle only (the worker's bundler loads this module into
 * Temporal's sandbox; nothing in Node imports it). They are @temporalio/interceptors-opentelemetry's, with one
 * change that keeps replay deterministic when tracing is switched on for workflows that ran without it.
 *
 * The package gates its update and query spans behind an SDK flag, so a workflow task recorded without the flag
 * replays without them; but it does so inside an `async` method, and the extra promise turns delay the update's
 * completion behind the commands the workflow issues in the same task. A history recorded without tracing then
 * fails to replay with tracing on (test/tracing/replay-traced.test.ts found two: an update completing beside a
 * search attribute upsert or an activity). Here the unflagged path hands the call on synchronously, as if the
 * interceptor were absent.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type {
  Next,
  QueryInput,
  UpdateInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
} from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags.js';
import { getActivator } from '@temporalio/workflow/lib/global-attributes.js';

/** Whether this workflow task traces updates and queries: recorded in the history by the task that first did. */
const tracesAllMethods = () =>
  getActivator().hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods);

class InboundInterceptor extends OpenTelemetryInboundInterceptor {
  override handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
    return tracesAllMethods() ? super.handleUpdate(input, next) : next(input);
  }

  override handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
    return tracesAllMethods() ? super.handleQuery(input, next) : next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new InboundInterceptor()],
  outbound: [new OpenTelemetryOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
