import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { scrapeCache } from './scrape-cache.ts';

/**
 * Prometheus metrics. One registry per process, built here and handed down through the deps of
 * whoever counts (never prom-client's global registry). Every label takes a bounded set of values: route templates,
 * never paths; template names from config; failure classes, never messages; no account or document ids.
 */

/** Latencies of HTTP requests, webhook calls and WhatsApp calls, in seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Finalization reads, composes, signs (and perhaps time-stamps) a PDF: seconds to minutes. */
const FINALIZATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];

export interface HttpMetrics {
  /** One answered request: `route` is a route template (see src/http/metrics.ts), never a raw path. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
}

/** Why a WhatsApp send failed, as src/whatsapp's SendFailureReason says it (bounded). */
export type WhatsAppFailureReason = 'graph_error' | 'http_error' | 'network' | 'timeout' | 'invalid_response';

export interface WhatsAppMetrics {
  /** One call to the provider: `template` is the template's configured name. */
  sent(template: string, outcome: 'accepted' | 'failed', seconds: number): void;
  failed(template: string, reason: WhatsAppFailureReason, retryable: boolean): void;
}

/** How one webhook attempt went: `success`, the receiver's status class, or the delivery error class. */
export type WebhookAttemptOutcome =
  | 'success'
  | 'http_3xx'
  | 'http_4xx'
  | 'http_5xx'
  | 'http_other'
  | 'timeout'
  | 'connection_refused'
  | 'connection_failed'
  | 'dns'
  | 'tls'
  | 'blocked_address';

export const WEBHOOK_ATTEMPT_OUTCOMES: readonly WebhookAttemptOutcome[] = [
  'success',
  'http_3xx',
  'http_4xx',
  'http_5xx',
  'http_other',
  'timeout',
  'connection_refused',
  'connection_failed',
  'dns',
  'tls',
  'blocked_address',
];

/** How a delivery ended: delivered, given up after its retries, or its webhook disabled by a 410. */
export type WebhookDeliveryResult = 'succeeded' | 'failed' | 'gone';
const WEBHOOK_DELIVERY_RESULTS: readonly WebhookDeliveryResult[] = ['succeeded', 'failed', 'gone'];

export interface WebhookMetrics {
  attempt(outcome: WebhookAttemptOutcome, seconds: number): void;
  settled(result: WebhookDeliveryResult): void;
}

/** Why a finalization attempt failed: the failure type the workflow sees, or `other` (retryable). */
export const FINALIZATION_FAILURE_REASONS = [
  'FinalizeError',
  'FinalizeInputError',
  'FinalizeStateError',
  'PdfTooComplexError',
  'SignerConfigError',
  'other',
] as const;
export type FinalizationFailureReason = (typeof FINALIZATION_FAILURE_REASONS)[number];

export interface FinalizationMetrics {
  /** A final PDF produced, signed and stored (a run that finds it done already is not counted). */
  succeeded(seconds: number): void;
  failed(reason: FinalizationFailureReason, retryable: boolean): void;
}

export const ARCHIVE_RENEWAL_RESULTS = ['renewed', 'failed'] as const;

export interface ArchiveRenewalMetrics {
  /** One final file's archive time-stamp renewed, or its renewal failed (the next scheduled run tries again). */
  renewal(result: (typeof ARCHIVE_RENEWAL_RESULTS)[number]): void;
}

/** What the worker's activities count. */
export interface WorkerMetrics {
  whatsapp: WhatsAppMetrics;
  webhooks: WebhookMetrics;
  finalization: FinalizationMetrics;
  archive: ArchiveRenewalMetrics;
}

/** A fresh registry with Node's process metrics (CPU, memory, event loop, GC) on it. */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

export function createHttpMetrics(registry: Registry): HttpMetrics {
  const duration = new Histogram({
    name: 'wathiq_http_request_duration_seconds',
    help: 'HTTP requests answered by the API, by method, route template and status code: time to the last byte',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return {
    observeRequest({ method, route, status }, seconds) {
      duration.observe({ method, route, status: String(status) }, seconds);
    },
  };
}

export function createWorkerMetrics(
  registry: Registry,
  options: { templates: readonly string[] },
): WorkerMetrics {
  // Registered in this order, which is the order a scrape lists them in.
  return {
    whatsapp: createWhatsAppMetrics(registry, options.templates),
    webhooks: createWebhookMetrics(registry),
    finalization: createFinalizationMetrics(registry),
    archive: createArchiveRenewalMetrics(registry),
  };
}

// Every series of a bounded label set exists from the start at 0, so rates and alerts see the first event.

function createWhatsAppMetrics(registry: Registry, templates: readonly string[]): WhatsAppMetrics {
  const sends = new Counter({
    name: 'wathiq_whatsapp_sends_total',
    help: 'Messages handed to the WhatsApp provider, by template and outcome (accepted or failed)',
    labelNames: ['template', 'outcome'] as const,
    registers: [registry],
  });
  const sendDuration = new Histogram({
    name: 'wathiq_whatsapp_send_duration_seconds',
    help: 'Time of one call to the WhatsApp provider, by template',
    labelNames: ['template'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const sendFailures = new Counter({
    name: 'wathiq_whatsapp_send_failures_total',
    help: 'Refused or failed WhatsApp sends, by template, failure reason class and whether a retry can succeed',
    labelNames: ['template', 'reason', 'retryable'] as const,
    registers: [registry],
  });
  for (const template of new Set(templates)) {
    for (const outcome of ['accepted', 'failed'] as const) sends.labels({ template, outcome }).inc(0);
    sendDuration.zero({ template });
  }
  return {
    sent(template, outcome, seconds) {
      sends.labels({ template, outcome }).inc();
      sendDuration.observe({ template }, seconds);
    },
    failed(template, reason, retryable) {
      sendFailures.labels({ template, reason, retryable: String(retryable) }).inc();
    },
  };
}

function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const attempts = new Counter({
    name: 'wathiq_webhook_attempts_total',
    help: 'Webhook delivery attempts (HTTP calls to receivers), by outcome class',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'wathiq_webhook_attempt_duration_seconds',
    help: 'Time of one webhook delivery attempt, by outcome class',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'wathiq_webhook_deliveries_total',
    help: 'Webhook deliveries that ended: succeeded, failed after every retry, or gone (receiver answered 410)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  for (const outcome of WEBHOOK_ATTEMPT_OUTCOMES) {
    attempts.labels({ outcome }).inc(0);
    attemptDuration.zero({ outcome });
  }
  for (const result of WEBHOOK_DELIVERY_RESULTS) deliveries.labels({ result }).inc(0);
  return {
    attempt(outcome, seconds) {
      attempts.labels({ outcome }).inc();
      attemptDuration.observe({ outcome }, seconds);
    },
    settled(result) {
      deliveries.labels({ result }).inc();
    },
  };
}

function createFinalizationMetrics(registry: Registry): FinalizationMetrics {
  const finalization = new Histogram({
    name: 'wathiq_finalization_duration_seconds',
    help: 'Time to produce, sign and store one final PDF',
    buckets: FINALIZATION_BUCKETS,
    registers: [registry],
  });
  const finalizationFailures = new Counter({
    name: 'wathiq_finalization_failures_total',
    help: 'Failed finalization attempts, by failure type and whether the activity retries it',
    labelNames: ['reason', 'retryable'] as const,
    registers: [registry],
  });
  return {
    succeeded(seconds) {
      finalization.observe(seconds);
    },
    failed(reason, retryable) {
      finalizationFailures.labels({ reason, retryable: String(retryable) }).inc();
    },
  };
}

function createArchiveRenewalMetrics(registry: Registry): ArchiveRenewalMetrics {
  const archiveRenewals = new Counter({
    name: 'wathiq_archive_renewals_total',
    help: 'Archive time-stamp renewals of final files (PAdES B-LTA), by result; a failed one is retried by the next scheduled run',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  for (const result of ARCHIVE_RENEWAL_RESULTS) archiveRenewals.labels({ result }).inc(0);
  return {
    renewal(result) {
      archiveRenewals.labels({ result }).inc();
    },
  };
}

export interface DocumentsGaugeOptions {
  /** Documents per status across every account (one GROUP BY query). */
  count(): Promise<Record<string, number>>;
  /** Every status there is, reported at 0 when no document has it. */
  statuses: readonly string[];
  /** A count is reused for this long, so scrapes cannot hammer the database. */
  cacheMs: number;
  /** A failed count is reported here; the gauge keeps the last values it had. */
  onError(err: unknown): void;
  now?: () => number;
}

/**
 * `wathiq_documents{status}`, counted from PostgreSQL when scraped: at most one query per `cacheMs`, and concurrent
 * scrapes share the one in flight.
 */
export function registerDocumentsGauge(registry: Registry, options: DocumentsGaugeOptions): void {
  const counts = scrapeCache({ ...options, read: () => options.count() });

  new Counter({
    name: 'wathiq_documents_count_failures_total',
    help: 'Scrapes whose count of documents by status failed (the gauge kept its previous values)',
    registers: [registry],
    async collect() {
      await counts.fresh();
      this.reset();
      this.inc(counts.failures());
    },
  });
  new Gauge({
    name: 'wathiq_documents',
    help: 'Documents by status, across every account (counted at scrape time, cached briefly)',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const cached = await counts.fresh();
      if (!cached) return;
      const statuses = new Set([...options.statuses, ...Object.keys(cached)]);
      for (const status of statuses) this.set({ status }, cached[status] ?? 0);
    },
  });
}
