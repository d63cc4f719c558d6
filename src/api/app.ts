import Router from '@koa/router';
import { uncachedApiKeyLookup, type ApiKeyLookup } from '../features/accounts/api-key-cache.ts';
import Koa from 'koa';
import { koaBody } from 'koa-body';
import { createAdminDashboard } from '../admin/dashboard.ts';
import type { AppState } from '../http/context.ts';
import type { ApiDeps } from '../http/deps.ts';
import { authenticate } from './middleware/authenticate.ts';
import { errorHandler } from './middleware/error-handler.ts';
import { idempotency } from './middleware/idempotency.ts';
import { hsts } from '../http/hsts.ts';
import { methodGuard } from '../http/methods.ts';
import { underItsPrefix, whereItsRoutesAre } from '../http/router-gate.ts';
import { httpMetrics } from '../http/metrics.ts';
import { serverSpans } from '../http/tracing.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';
import { registerCoreOperations } from './openapi/core-operations.ts';
import { registerWebhookEvents } from './openapi/webhook-events.ts';
import { createOpenApiRouter } from './openapi/openapi-routes.ts';
import { OpenApiRegistry } from './openapi/registry.ts';
import { createReferenceRouter } from './reference/reference-routes.ts';
import { createApproversRouter } from '../features/documents/approvers-routes.ts';
import { createDocumentsRouter } from '../features/documents/documents-routes.ts';
import { createDownloadRouter } from '../features/documents/download-routes.ts';
import { createFilesRouter } from '../features/documents/files-routes.ts';
import { createApprovalRouter } from './routes/approval-routes.ts';
import { createHealthRouter } from './routes/health-routes.ts';
import { createWhatsAppWebhookRouter, WHATSAPP_WEBHOOK_PATH } from './routes/whatsapp-webhook-routes.ts';
import { createApprovalPageRouter } from '../approval-page/approval-page-routes.ts';
import { createDevInboxRouter } from '../dev-inbox/dev-inbox-routes.ts';
import { createVerifyPageRouter } from '../verify-page/verify-page-routes.ts';
import { devToolsAllowed } from '../config.ts';
import { createWebhooksRouter } from '../features/webhooks/webhooks-routes.ts';
import { createAccountRouter } from '../features/accounts/account-routes.ts';
import { createTemplatesRouter } from '../features/templates/templates-routes.ts';
import { bulkSendJsonBody } from '../features/bulk-sends/bulk-send-body.http.ts';
import { createBulkSendsRouter } from '../features/bulk-sends/bulk-sends-routes.ts';
import { createApiServices } from './services.ts';
import type { ResolveHost } from '../features/webhooks/ssrf-guard.ts';
import type { WriteNotices } from '../features/approval/write-notices.ts';

export const API_PREFIX = '/api/v1';
/** A bulk send's rows may be larger than JSON_BODY_LIMIT (BULK_SEND_MAX_MB): its route reads its own body. */
const BULK_SEND_BODY_PATH = /^\/api\/v1\/templates\/[^/]+\/bulk-sends\/?$/;

const readsOwnBody = (path: string) =>
  path.startsWith('/a/') ||
  path.startsWith('/v/') ||
  path === `${API_PREFIX}${WHATSAPP_WEBHOOK_PATH}` ||
  path.startsWith('/dev/inbox');

/** Builds the Koa app from its dependencies; no module-level state, so tests can build as many as they like. */
export function createApp(
  apiDeps: ApiDeps & {
    webhookResolve?: ResolveHost;
    /** The dashboard's clock; tests may pin it. */ now?: () => Date;
    /** How keys are found; the API server hands in its cache (without one, PostgreSQL is read each time). */
    apiKeys?: ApiKeyLookup;
    /** When actions are written, as PostgreSQL announces it; the API server hands in its own (without one, read). */
    writeNotices?: WriteNotices;
    /** Collects the routes' descriptions; hand one in to read the OpenAPI document without serving it. */
    openapi?: OpenApiRegistry;
  },
): Koa<AppState> {
  // The approval client and the webhook dispatcher, built once for every router of this app.
  const deps = { ...apiDeps, ...createApiServices(apiDeps) };
  // Routers add their operations as they mount them; GET /openapi.json renders the result.
  const openapi = apiDeps.openapi ?? new OpenApiRegistry();
  registerCoreOperations(openapi);
  registerWebhookEvents(openapi);
  // TRUST_PROXY hops: only the last `hops` X-Forwarded-For entries (written by our proxies) are read, and ctx.ip
  // is the first of them: the address the outermost proxy saw. Entries before them are the client's to choose and
  // are ignored; with 0 the header is ignored and the socket address counts. ctx.ip is recorded on certificates
  // and counted by the dashboard's sign-in throttle.
  const hops = deps.config.http.proxyHops;
  const app = new Koa<AppState>({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // the error middleware logs; Koa's default handler would print to stderr

  const approvalPage = createApprovalPageRouter(deps);
  const files = createFilesRouter(deps);
  const verifyPage = createVerifyPageRouter(deps);
  // Anyone who can open the inbox can act as every approver: only outside production, on a loopback-only server.
  const devInbox =
    deps.config.whatsapp.provider === 'console' && devToolsAllowed(deps.config)
      ? createDevInboxRouter(deps)
      : undefined;

  const publicApi = new Router<AppState>({ prefix: API_PREFIX });
  publicApi.use(createHealthRouter(deps).routes());
  publicApi.use(createWhatsAppWebhookRouter(deps).routes());
  publicApi.use(createOpenApiRouter(openapi, API_PREFIX).routes());
  publicApi.use(createReferenceRouter(deps, API_PREFIX).routes());

  // One router a feature, each behind authentication, the rate limit and the Idempotency-Key step (the same
  // middleware, built once), so a request walks the layers of the feature that answers it, not of every feature.
  const { plans, fairShares } = deps.config;
  const guarded = [
    authenticate({ ...deps, apiKeys: apiDeps.apiKeys ?? uncachedApiKeyLookup(deps.db) }),
    rateLimit({ limiter: deps.rateLimiter, plans, fairShares }),
    idempotency(deps),
  ];
  const api = [
    createDocumentsRouter(deps, openapi),
    createDownloadRouter(deps, openapi),
    createApproversRouter(deps, openapi),
    createApprovalRouter(deps, openapi),
    createWebhooksRouter(deps, openapi),
    createAccountRouter(deps, openapi),
    createTemplatesRouter(deps, openapi),
    createBulkSendsRouter(deps, openapi),
  ].map((feature) => {
    const router = new Router<AppState>({ prefix: API_PREFIX });
    router.use(...guarded);
    router.use(feature.routes());
    return router;
  });

  const routers = [approvalPage, verifyPage, files, ...(devInbox ? [devInbox] : []), publicApi, ...api];
  // Metrics outermost, so every answer is timed and counted by its route template (never its path).
  app.use(httpMetrics(deps.metrics, routers));
  // The request's trace span around everything else, when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  if (deps.config.tracing) app.use(serverSpans());
  // HSTS first, on every response of every part of the app, when PUBLIC_BASE_URL is https.
  app.use(hsts(deps.config.http.publicBaseUrl));
  app.use(requestId(deps.logger));
  app.use(errorHandler(deps.logger));
  // The dashboard (/admin) parses its own forms and renders its own HTML errors, so it sits before the JSON edge.
  app.use(createAdminDashboard(deps));
  // 405 with Allow, 501 and OPTIONS are answered before any body is read or any key checked.
  app.use(methodGuard(routers));
  const jsonBody = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: deps.config.http.jsonBodyLimit,
    multipart: false,
    urlencoded: false,
    text: false,
  });
  const bulkSendJson = bulkSendJsonBody(deps.config.bulkSends.maxBytes);
  // Routes that need the raw bytes (signatures) or a larger limit (signature images) read their own bodies.
  app.use(async (ctx, next) => {
    if (readsOwnBody(ctx.path)) await next();
    else if (BULK_SEND_BODY_PATH.test(ctx.path)) await bulkSendJson(ctx, next);
    else await (jsonBody(ctx, next) as Promise<unknown>);
  });

  // Each router only under its prefix: a request walks the layers of the routers that could answer it.
  app.use(underItsPrefix(approvalPage));
  app.use(underItsPrefix(verifyPage));
  app.use(underItsPrefix(files));
  if (devInbox) app.use(underItsPrefix(devInbox));
  app.use(whereItsRoutesAre(publicApi));
  for (const router of api) app.use(whereItsRoutesAre(router));
  return app;
}
