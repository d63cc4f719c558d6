import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';

/** Seconds a refused upload is told to wait: uploads in flight end within seconds (received, then inspected). */
const RETRY_AFTER_SECONDS = 1;

function busy(message: string): AppError {
  return new AppError('service_unavailable', message, {}, { 'Retry-After': String(RETRY_AFTER_SECONDS) });
}

export interface UploadGate {
  /**
   * Admits one upload of `account` (call before reading its body) and answers how to let it go; throws a 503 with
   * Retry-After when this process already receives or checks UPLOADS_MAX_IN_FLIGHT uploads, or the account
   * UPLOADS_MAX_IN_FLIGHT_PER_ACCOUNT of them. The per-account part keeps room for the others: one account's flood
   * fills its own part, never the whole.
   */
  enter(account: string): () => void;
}

/** Counts uploads in flight in this API process (each app builds its own). */
export function createUploadGate(limits: Config['fairShares']): UploadGate {
  let total = 0;
  const byAccount = new Map<string, number>();
  return {
    enter(account) {
      const mine = byAccount.get(account) ?? 0;
      if (mine >= limits.uploadsInFlightPerAccount) {
        throw busy(
          `This account already has ${limits.uploadsInFlightPerAccount} uploads in progress, the most it may have at once; try again in ${RETRY_AFTER_SECONDS} second when one has finished.`,
        );
      }
      if (total >= limits.uploadsInFlight) {
        throw busy(
          `Too many documents are being uploaded right now; try again in ${RETRY_AFTER_SECONDS} second.`,
        );
      }
      total += 1;
      byAccount.set(account, mine + 1);
      let left = false;
      return () => {
        if (left) return;
        left = true;
        total -= 1;
        const n = (byAccount.get(account) ?? 1) - 1;
        if (n > 0) byAccount.set(account, n);
        else byAccount.delete(account);
      };
    },
  };
}
