import type { Knex } from '../../db/knex.ts';
import type { Logger } from '../../logger.ts';
import { approvalSignalsStore } from './approval-signals-store.ts';
import type { ApprovalClient } from './client.ts';

/** How often the relay looks for signals still unsent. */
const SWEEP_EVERY_MS = 1_000;
/**
 * How old an unsent signal must be before the relay sends it: the API process that recorded the action sends its
 * own right after commit, so only a signal that process never sent (it crashed, Temporal refused) is the relay's.
 */
const SENDER_GRACE_MS = 2_000;
const BATCH = 100;

export interface SignalRelayDeps {
  db: Knex;
  approvals: Pick<ApprovalClient, 'follow'>;
  logger: Logger;
}

/**
 * One pass: the unsent signals older than `graceMs`, claimed with SKIP LOCKED so several processes share the
 * work, each sent and marked sent in the claim's transaction. A signal that fails stays for the next pass.
 * Returns how many were sent.
 */
export async function relayApprovalSignals(
  deps: SignalRelayDeps,
  graceMs = SENDER_GRACE_MS,
): Promise<number> {
  return deps.db.transaction(async (trx) => {
    const store = approvalSignalsStore(trx);
    let sent = 0;
    for (const signal of await store.claimUnsent(trx, graceMs, BATCH)) {
      try {
        await deps.approvals.follow(signal);
        await store.markSent(signal.id);
        sent++;
      } catch (err) {
        deps.logger.warn(
          { err, documentId: signal.documentId, signalId: signal.id },
          'approval signal not sent; the relay tries again',
        );
      }
    }
    return sent;
  });
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
