import { secretBoxFromSettings } from '../auth/secret-box.ts';
import { activityWorkflowRun } from '../features/approval/activities/index.ts';
import { createArchiveRenewer } from '../features/approval/archive-renewal.ts';
import { createFinalizer, signerOnce } from '../features/approval/finalize.ts';
import type { ActivityDeps } from '../activities/index.ts';
import { activityTemporalClient } from '../features/webhooks/activities.ts';
import type { Config } from '../config.ts';
import type { CreateSignerOptions } from '../pdf/sign/signer.ts';
import type { Knex } from '../db/knex.ts';
import type { Logger } from '../logger.ts';
import type { WorkerMetrics } from '../metrics/metrics.ts';
import { createStorage } from '../storage/create-storage.ts';
import { createWebhookDispatcher } from '../features/webhooks/dispatch.ts';
import type { ResolveHost } from '../features/webhooks/ssrf-guard.ts';
import { createWhatsAppProvider, meteredProvider, type WhatsAppProvider } from '../whatsapp/index.ts';

/** The signer the worker uses, from config: the PKCS#12 (or the development certificate), an HSM or a CSC service. */
export const signerOptions = (config: Config): CreateSignerOptions => ({
  p12Path: config.signing.p12Path,
  p12Password: config.signing.p12Password,
  devCertDir: config.signing.devCertDir,
  production: config.env === 'production',
  kind: config.signing.kind,
  pkcs11: config.signing.pkcs11,
  csc: config.signing.csc,
});

/** Everything the worker's activities need, built from config: one place for main, tests and benchmarks. */
export function createWorkerDeps(
  config: Config,
  db: Knex,
  logger: Logger,
  overrides: {
    whatsappProvider?: WhatsAppProvider;
    webhookLookup?: ResolveHost;
    metrics?: WorkerMetrics;
  } = {},
): ActivityDeps {
  const { metrics } = overrides;
  const provider = overrides.whatsappProvider ?? createWhatsAppProvider(config, { logger });
  // Events recorded by activities are dispatched from inside them, with the worker's own Temporal client.
  const secrets = secretBoxFromSettings(config.encryption);
  const webhooks = createWebhookDispatcher({
    db,
    secrets,
    temporal: activityTemporalClient,
    taskQueue: config.temporal.taskQueue,
    retryScale: config.webhooks.retryScale,
    logger,
  });
  const storage = createStorage(config);
  // One signer per worker: the key's certificates are read once, on first use (see signerOnce).
  const signer = signerOnce(signerOptions(config));
  return {
    db,
    logger,
    storage,
    secrets,
    approvalPolicies: config.approvalPolicies,
    config,
    publicBaseUrl: config.http.publicBaseUrl,
    reminderLimits: config.reminders,
    finalize: createFinalizer({
      db,
      storage,
      logger,
      secrets,
      signer,
      publicBaseUrl: config.http.publicBaseUrl,
      tsaUrl: config.signing.tsaUrl,
      signatureLevel: config.signing.signatureLevel,
      revocation: config.signing.revocation,
      maxImageSidePx: config.images.maxSidePx,
      pdf: config.pdf,
      ...(metrics && { metrics: metrics.finalization }),
    }),
    archiveRenewal: createArchiveRenewer({
      db,
      storage,
      logger,
      tsaUrl: config.signing.tsaUrl,
      revocation: config.signing.revocation,
      ...(metrics && { metrics: metrics.archive }),
    }),
    whatsapp: {
      provider: metrics ? meteredProvider(provider, metrics.whatsapp, config.whatsapp.templates) : provider,
      templates: config.whatsapp.templates,
      recordRetry: config.whatsapp.recordRetry,
    },
    webhooks: {
      allowPrivate: config.webhooks.allowPrivate,
      timeoutMs: config.webhooks.timeoutMs,
      ...(overrides.webhookLookup ? { lookup: overrides.webhookLookup } : {}),
      dispatcher: webhooks,
      ...(metrics && { metrics: metrics.webhooks }),
    },
    // markDocumentSent checks a draft against the start input of the run it works for.
    workflowRun: activityWorkflowRun,
    onEvent: async (event) => {
      await webhooks.dispatchEvent(event);
    },
  };
}
