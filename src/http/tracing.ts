import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Middleware } from 'koa';
import { TRACER_NAME } from '../tracing/spans.ts';
import type { AppState } from './context.ts';

/**
 * The route template @koa/router matched (`/api/v1/documents/:id/send`, `/a/:token`), never the request's path:
 * paths carry approval-link and download tokens. Undefined when no route matched.
 */
export function routeTemplate(ctx: { _matchedRoute?: unknown }): string | undefined {
  return typeof ctx._matchedRoute === 'string' ? ctx._matchedRoute : undefined;
}

/**
 * One SERVER span per request, named `METHOD /route/:template` once routing is done (just `METHOD` when no route
 * matched), with the method, the route template, the status and the request id; never the path, the query or a
 * header. The trace starts here: a caller's `traceparent` is ignored, since the API is public and a caller would
 * otherwise choose our trace ids and sampling. Everything the request does (the Temporal client call that starts
 * a workflow, above all) runs inside the span, so the workflow and its activities join the same trace.
 * Mounted only when tracing is on.
 */
export function serverSpans(): Middleware<AppState> {
  const tracer = trace.getTracer(TRACER_NAME);
  return (ctx, next) =>
    tracer.startActiveSpan(
      ctx.method,
      { kind: SpanKind.SERVER, root: true, attributes: { 'http.request.method': ctx.method } },
      ROOT_CONTEXT,
      async (span) => {
        try {
          await next();
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR });
          throw err;
        } finally {
          const route = routeTemplate(ctx as { _matchedRoute?: unknown });
          if (route) {
            span.updateName(`${ctx.method} ${route}`);
            span.setAttribute('http.route', route);
          }
          span.setAttribute('http.response.status_code', ctx.status);
          if (ctx.state.requestId) span.setAttribute('wathiq.request_id', ctx.state.requestId);
          // Per the HTTP conventions a server span fails on 5xx only: a 4xx is the caller's mistake.
          if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        }
      },
    );
}
