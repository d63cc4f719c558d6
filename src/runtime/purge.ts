import { SESSION_POLICY } from '../admin/sessions.ts';
import type { Config } from '../config.ts';
import type { Knex } from '../db/knex.ts';
import { adminSessionsStore, loginAttemptsStore } from '../db/stores/admin-sessions-store.ts';
import { idempotencyStore } from '../db/stores/idempotency-store.ts';
import { loginChallengesStore } from '../db/stores/login-challenges-store.ts';
import type { Logger } from '../logger.ts';

/**
 * Housekeeping of rows nothing reads once their time is up: sign-in counters (`login_attempts`, forgotten after
 * the failure window), idempotency keys (past `expires_at`), dashboard sessions (past their absolute or idle
 * expiry) and sign-ins left waiting for their second-step code (past `expires_at`). Every API process runs it on a jittered timer; each delete is one bounded batch that skips rows
 * another transaction holds, so processes purging at the same moment share the work instead of queueing.
 *
 * A timer in the API process rather than a Temporal Schedule: these tables belong to the HTTP side (the worker
 * never touches them), the purge is four plain idempotent DELETEs that any number of processes may run at
 * once, and it needs no workflow code (so no new workflow history to keep replayable) and keeps working
 * when Temporal is down.
 */

export interface PurgeDeps {
  db: Knex;
  config: Pick<Config, 'login' | 'purge'>;
  logger: Logger;
  /** The clock the dashboard writes its rows with; tests may pin it. */
  now?: () => Date;
}

export interface PurgeReport {
  loginAttempts: number;
  idempotencyKeys: number;
  adminSessions: number;
  /** Sign-ins that never got their second-step code. */
  loginChallenges: number;
}

/** Deletes batch after batch until one comes back short, or `maxBatches` have run; returns the total. */
async function inBatches(
  batch: (limit: number) => Promise<number>,
  limits: { batchSize: number; maxBatches: number },
): Promise<number> {
  let total = 0;
  for (let i = 0; i < limits.maxBatches; i++) {
    const deleted = await batch(limits.batchSize);
    total += deleted;
    if (deleted < limits.batchSize) break;
  }
  return total;
}

/** One purge run over the four tables. */
export async function purgeStaleRows(deps: PurgeDeps): Promise<PurgeReport> {
  const now = (deps.now ?? (() => new Date()))();
  const limits = deps.config.purge;
  const loginBefore = new Date(now.getTime() - deps.config.login.windowMs);
  const idleSince = new Date(now.getTime() - SESSION_POLICY.idleMs);
  return {
    loginAttempts: await inBatches(
      (limit) => loginAttemptsStore(deps.db).purgeStale(loginBefore, now, limit),
      limits,
    ),
    idempotencyKeys: await inBatches((limit) => idempotencyStore(deps.db).purgeExpired(limit), limits),
    adminSessions: await inBatches(
      (limit) => adminSessionsStore(deps.db).purgeExpired(now, idleSince, limit),
      limits,
    ),
    loginChallenges: await inBatches(
      (limit) => loginChallengesStore(deps.db).purgeExpired(now, limit),
      limits,
    ),
  };
}

export interface PurgeSchedule {
  /** Cancels the next run and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `purgeStaleRows` every PURGE_INTERVAL_MINUTES, each wait drawn between 80 % and 120 % of it so several
 * API processes started together drift apart. The timer never keeps the process alive; a failed run is logged
 * and the next one comes as usual.
 */
export function startPurgeSchedule(deps: PurgeDeps): PurgeSchedule {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const run = async () => {
    try {
      const report = await purgeStaleRows(deps);
      const total = Object.values<number>({ ...report }).reduce((sum, n) => sum + n, 0);
      if (total > 0) deps.logger.info({ purged: report }, 'stale rows purged');
    } catch (err) {
      deps.logger.warn({ err }, 'purge of stale rows failed; trying again at the next interval');
    }
  };
  const schedule = () => {
    if (stopped) return;
    const wait = deps.config.purge.intervalMs * (0.8 + Math.random() * 0.4);
    timer = setTimeout(() => {
      timer = undefined;
      running = run().finally(() => {
        running = undefined;
        schedule();
      });
    }, wait);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
