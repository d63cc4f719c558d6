import type { Knex } from '../../db/knex.ts';
import { AppError } from '../../errors.ts';
import type { Logger } from '../../logger.ts';
import { approvalSignalsStore, type ApprovalSignal } from './approval-signals-store.ts';
import type { ApprovalClient } from './client.ts';

/** How often the relay looks for signals still unsent. */
const SWEEP_EVERY_MS = 1_000;
/**
 * How old an unsent signal must be before the relay sends it: the API process that recorded the action sends its
 * own right after commit, so only a signal that process never sent (it crashed, Temporal refused) is the relay's.
 */
const SENDER_GRACE_MS = 2_000;
const BATCH = 100;
/**
 * How long a claimed row is this relay's alone. Longer than a pass normally takes (a pass stops at the first
 * Temporal that does not answer, so it waits out one answer deadline at most); a relay that dies mid-pass leaves
 * its rows to another once it passes. A pass that outlasts it may see a row sent twice, which the run ignores
 * (the signal is idempotent by evidence id).
 */
const LEASE_MS = 60_000;
/** Why a row is given up: its run no longer exists (the run's last write found the action in the read model). */
export const RUN_GONE = 'workflow_closed';

export interface SignalRelayDeps {
  db: Knex;
  approvals: Pick<ApprovalClient, 'follow'>;
  logger: Logger;
}

/** Temporal did not answer (down, unreachable, past its deadline): every other row would wait the same. */
const unavailable = (err: unknown) => err instanceof AppError && err.type === 'service_unavailable';

/** Marks the row sent, or given up when its run is gone. */
export async function settleSignal(
  db: Knex,
  signal: ApprovalSignal,
  outcome: 'sent' | 'gone',
): Promise<void> {
  const store = approvalSignalsStore(db);
  if (outcome === 'sent') await store.markSent(signal.id);
  else await store.markDead(signal.id, RUN_GONE);
}

/**
 * One pass: claims the unsent signals older than `graceMs` (a lease, in one statement, so several processes share
 * the work without sending the same row at once), then sends each outside any transaction and marks it sent.
 * A signal that fails is counted and freed for the next pass; at the first failure because Temporal does not
 * answer, the pass frees the rest and ends. Returns how many were sent.
 */
export async function relayApprovalSignals(
  deps: SignalRelayDeps,
  graceMs = SENDER_GRACE_MS,
): Promise<number> {
  const store = approvalSignalsStore(deps.db);
  const claimed = await store.claimUnsent({ olderThanMs: graceMs, leaseMs: LEASE_MS, limit: BATCH });
  let sent = 0;
  for (const [i, signal] of claimed.entries()) {
    let outcome: 'sent' | 'gone';
    try {
      outcome = await deps.approvals.follow(signal);
    } catch (err) {
      await store.markFailed(signal.id, String((err as Error)?.message ?? err));
      deps.logger.warn(
        { err, documentId: signal.documentId, signalId: signal.id },
        'approval signal not sent; the relay tries again',
      );
      if (!unavailable(err)) continue;
      await store.release(claimed.slice(i + 1).map((s) => s.id));
      break;
    }
    await settleSignal(deps.db, signal, outcome);
    if (outcome === 'sent') sent++;
    else
      deps.logger.warn(
        { documentId: signal.documentId, signalId: signal.id },
        'approval signal dropped: its run is gone',
      );
  }
  return sent;
}

/**
 * Runs `relayApprovalSignals` every SWEEP_EVERY_MS while the process runs (every API process does), so an action
 * recorded by a process that died before signalling still reaches its run.
 */
export function startApprovalSignalRelay(deps: SignalRelayDeps): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const tick = () => {
    running = relayApprovalSignals(deps)
      .then((sent) => {
        if (sent > 0) deps.logger.info({ sent }, 'approval signals relayed');
      })
      .catch((err: unknown) => deps.logger.warn({ err }, 'approval signal relay failed; trying again'))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, SWEEP_EVERY_MS).unref();
      });
  };
  timer = setTimeout(tick, SWEEP_EVERY_MS).unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
