import type { Db } from '../db/knex.ts';
import { listen } from '../db/pg-listen.ts';
import { EVIDENCE_ACCEPTED_CHANNEL } from '../db/stores/action-evidence-store.ts';
import type { Logger } from '../logger.ts';

/** One action's wait for its evidence to be accepted. */
export interface EvidenceWait {
  /** True once PostgreSQL announced it; false when the notices stopped first (one may have gone by unheard). */
  accepted: Promise<boolean>;
  /** Stops waiting (the answer came some other way). */
  cancel(): void;
}

/**
 * Tells an API process when an action's evidence is accepted, which recordApproverAction marks in the transaction
 * that writes the action: PostgreSQL announces it on commit (migration 028) to the connection this process listens
 * on. So the answer to an action need not read the row again and again while the workflow's own answer waits on
 * an activity that does more after the write (the next approver's request, the finalization).
 */
export interface EvidenceWatch {
  /**
   * Starts waiting for `evidenceId`; call it before the action is sent, so its notice cannot go by first.
   * Undefined while the notices are not heard at all (the caller reads the row instead).
   */
  watch(evidenceId: string): EvidenceWait | undefined;
  close(): Promise<void>;
}

export async function createEvidenceWatch(deps: { db: Db; logger: Logger }): Promise<EvidenceWatch> {
  const waiters = new Map<string, Set<(heard: boolean) => void>>();
  const settleAll = (heard: boolean) => {
    for (const set of waiters.values()) for (const settle of set) settle(heard);
    waiters.clear();
  };
  const notices = await listen(
    deps.db,
    EVIDENCE_ACCEPTED_CHANNEL,
    {
      notice(payload) {
        const set = payload === undefined ? undefined : waiters.get(payload);
        if (!set) return;
        waiters.delete(payload!);
        for (const settle of set) settle(true);
      },
      up: () => undefined,
      down: () => settleAll(false),
    },
    { logger: deps.logger, what: 'evidence notices' },
  );
  return {
    watch(evidenceId) {
      if (!notices.up) return undefined;
      let settle!: (heard: boolean) => void;
      const accepted = new Promise<boolean>((resolve) => (settle = resolve));
      const set = waiters.get(evidenceId) ?? new Set();
      set.add(settle);
      waiters.set(evidenceId, set);
      return {
        accepted,
        cancel() {
          const current = waiters.get(evidenceId);
          current?.delete(settle);
          if (current?.size === 0) waiters.delete(evidenceId);
        },
      };
    },
    async close() {
      await notices.close();
      settleAll(false);
    },
  };
}
