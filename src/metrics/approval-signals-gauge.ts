import { Gauge, type Registry } from 'prom-client';
import { scrapeCache } from './scrape-cache.ts';

/** What the approval outbox holds undelivered (approval-signals-store.ts `backlog`). */
export interface ApprovalSignalsBacklog {
  unsent: number;
  oldestSeconds: number;
  dead: number;
}

/**
 * The approval signals not delivered to their runs, read from PostgreSQL when scraped (cached for `cacheMs`):
 * `wathiq_approval_signals_unsent` and `wathiq_approval_signals_unsent_oldest_seconds` (a run that has not heard
 * of an action; the alert watches the age), and `wathiq_approval_signals_dead` (signals given up because their
 * run no longer exists). A failed read leaves the gauges as they were.
 */
export function registerApprovalSignalsGauges(
  registry: Registry,
  options: { read(): Promise<ApprovalSignalsBacklog>; cacheMs: number; onError(err: unknown): void },
): void {
  const backlog = scrapeCache(options);
  const gauge = (name: string, help: string, value: (b: ApprovalSignalsBacklog) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const b = await backlog.fresh();
        if (b) this.set(value(b));
      },
    });
  gauge(
    'wathiq_approval_signals_unsent',
    'Approver actions recorded whose signal has not reached the document’s workflow run yet',
    (b) => b.unsent,
  );
  gauge(
    'wathiq_approval_signals_unsent_oldest_seconds',
    'Age of the oldest approval signal not sent yet (0 when none): its run has not heard of an action',
    (b) => b.oldestSeconds,
  );
  gauge(
    'wathiq_approval_signals_dead',
    'Approval signals given up because their workflow run no longer exists (see approval_signals.dead_reason)',
    (b) => b.dead,
  );
}
