import { Context } from '@temporalio/activity';
import type { ProviderAnswerMemory } from '../whatsapp/index.ts';

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

/**
 * Keeps WhatsApp's answer in the running activity's heartbeat details. Temporal hands the last details to the
 * next attempt of the same activity (`info.heartbeatDetails`): the worker flushes them with a failed attempt's
 * report (SDK 1.24), and the first heartbeat of an attempt is sent to the server at once, so it also outlives a
 * worker that dies after the send. No heartbeat time-out is needed for this. Undefined outside an activity (tests
 * that call the activity functions directly).
 */
export function heartbeatMemory(idempotencyKey: string): ProviderAnswerMemory | undefined {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return undefined;
  }
  return {
    recall: () => wamidFromHeartbeat(context.info.heartbeatDetails, idempotencyKey),
    keep: (wamid) => context.heartbeat({ idempotencyKey, wamid } satisfies SentHeartbeat),
  };
}
