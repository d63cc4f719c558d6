import type { Config, ConfigRole } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import { approvalSignalsStore } from '../features/approval/approval-signals-store.ts';
import { countDocumentsByStatus } from '../features/documents/document-counts-store.ts';
import { DOCUMENT_STATUSES } from '../domain/model.ts';
import type { Logger } from '../logger.ts';
import { registerApprovalSignalsGauges } from '../metrics/approval-signals-gauge.ts';
import { freeLoopbackPort } from '../metrics/loopback-port.ts';
import {
  createHttpMetrics,
  createMetricsRegistry,
  createWorkerMetrics,
  registerDocumentsGauge,
  type HttpMetrics,
  type WorkerMetrics,
} from '../metrics/metrics.ts';
import { httpMetricsSource, startMetricsServer, type RunningMetricsServer } from '../metrics/server.ts';
import { templateNames } from '../whatsapp/index.ts';

/** How long the endpoint waits for the Temporal SDK's exporter (on loopback, in this process) before leaving it out. */
const TEMPORAL_EXPORTER_TIMEOUT_MS = 2_000;

/**
 * The metrics of one process: one registry, with what this role counts. The API role counts
 * HTTP requests and reports documents by status; the worker role counts WhatsApp sends, webhook deliveries and
 * finalizations and has the Temporal SDK export its worker metrics on a loopback port, which `/metrics` appends:
 * one scrape target per process. `npm start` (role all) has both on one endpoint.
 */
export interface ProcessMetrics {
  http?: HttpMetrics;
  worker?: WorkerMetrics;
  /** `127.0.0.1:<port>` for the Temporal runtime's Prometheus exporter (roles that run the worker). */
  temporalBindAddress?: string;
  /** Adds the gauges that read PostgreSQL at scrape time (documents, approval signals) and starts the endpoint. */
  start(deps: { db: Knex; logger: Logger }): Promise<RunningMetricsServer>;
}

/** Undefined when metrics are off (METRICS_PORT unset outside production, or `off`). */
export async function createProcessMetrics(
  config: Config,
  role: ConfigRole,
): Promise<ProcessMetrics | undefined> {
  const settings = config.metrics;
  if (!settings) return undefined;
  const registry = createMetricsRegistry();
  const api = role !== 'worker';
  const worker = role !== 'api';
  const temporalBindAddress = worker ? `127.0.0.1:${await freeLoopbackPort()}` : undefined;
  return {
    ...(api && { http: createHttpMetrics(registry) }),
    ...(worker && {
      worker: createWorkerMetrics(registry, { templates: templateNames(config.whatsapp.templates) }),
    }),
    ...(temporalBindAddress && { temporalBindAddress }),
    async start({ db, logger }) {
      if (api) {
        registerDocumentsGauge(registry, {
          count: () => countDocumentsByStatus(db),
          statuses: DOCUMENT_STATUSES,
          cacheMs: settings.documentsCacheMs,
          onError: (err) => logger.warn({ err }, 'metrics: counting documents by status failed'),
        });
        registerApprovalSignalsGauges(registry, {
          read: () => approvalSignalsStore(db).backlog(),
          cacheMs: settings.documentsCacheMs,
          onError: (err) => logger.warn({ err }, 'metrics: reading the approval signals backlog failed'),
        });
      }
      return startMetricsServer({
        registry,
        host: settings.host,
        port: settings.port,
        sources: temporalBindAddress
          ? [httpMetricsSource(`http://${temporalBindAddress}/metrics`, TEMPORAL_EXPORTER_TIMEOUT_MS)]
          : [],
        onSourceError: (err) => logger.warn({ err }, "metrics: the Temporal SDK's exporter did not answer"),
      });
    },
  };
}
