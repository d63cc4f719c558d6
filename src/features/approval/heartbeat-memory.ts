import { currentActivityContext } from '../../temporal/activity-context.ts';
import type { ProviderAnswerMemory } from '../../whatsapp/index.ts';

/** What a notification activity heartbeats once WhatsApp has answered: the message id, for this notice. */
export interface SentHeartbeat {
  idempotencyKey: string;
  wamid: string;
}

/** The message id in heartbeat details, when they were written for this same notice; anything else is ignored. */
export function wamidFromHeartbeat(details: unknown, idempotencyKey: string): string | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const d = details as Partial<Record<keyof SentHeartbeat, unknown>>;
  if (d.idempotencyKey !== idempotencyKey || typeof d.wamid !== 'string') return undefined;
  return d.wamid.length > 0 && d.wamid.length <= 128 ? d.wamid : undefined;
}

/** Answers kept by local activities (no heartbeat there), newest last; bounded, the oldest dropped first. */
const localAnswers = new Map<string, string>();
const LOCAL_ANSWERS_MAX = 10_000;
function keepLocally(idempotencyKey: string, wamid: string): void {
  localAnswers.delete(idempotencyKey);
  localAnswers.set(idempotencyKey, wamid);
  if (localAnswers.size > LOCAL_ANSWERS_MAX) localAnswers.delete(localAnswers.keys().next().value!);
}

/**
 * Keeps WhatsApp's answer in the running activity's heartbeat details. Temporal hands the last details to the
 * next attempt of the same activity (`info.heartbeatDetails`): the worker flushes them with a failed attempt's
 * report (SDK 1.24), and the first heartbeat of an attempt is sent to the server at once, so it also outlives a
 * worker that dies after the send. No heartbeat time-out is needed for this. Undefined outside an activity (tests
 * that call the activity functions directly).
 *
 * A local activity (approval requests of the legacy workflow's `approval-lean-v2` runs) has no heartbeat: its answer is kept
 * in this process, where the ordinary activity that takes over a failed local attempt also looks (it usually runs
 * on the same worker; on another one the notice is sent again, as sendNotice logs).
 */
export function heartbeatMemory(idempotencyKey: string): ProviderAnswerMemory | undefined {
  const context = currentActivityContext();
  if (!context) return undefined;
  if (context.info.isLocal) {
    return {
      recall: () => localAnswers.get(idempotencyKey),
      keep: (wamid) => keepLocally(idempotencyKey, wamid),
    };
  }
  return {
    recall: () =>
      wamidFromHeartbeat(context.info.heartbeatDetails, idempotencyKey) ?? localAnswers.get(idempotencyKey),
    keep: (wamid) => context.heartbeat({ idempotencyKey, wamid } satisfies SentHeartbeat),
  };
}
