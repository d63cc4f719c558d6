import { setTimeout as sleep } from 'node:timers/promises';
import type { BulkSendSettings } from '../../config.ts';
import { templateStore, type TemplateVersion } from '../templates/template-store.ts';
import { firstNotifiedRoles } from '../templates/roles.ts';
import {
  bulkSendStore,
  OPEN_BULK_STATUSES,
  type BulkSend,
  type BulkSendRow,
  type BulkSendStore,
} from './bulk-send-store.ts';
import type { PageResult } from './definitions.ts';
import { whatsAppMessagesStore } from '../../db/stores/whatsapp-messages-store.ts';
import { pacingStore } from './pacing-store.ts';
import { processRow, type RowDeps } from './process-row.ts';

/** A page stops taking new rows after this long, so its activity ends well within its time-out. */
const PAGE_BUDGET_MS = 120_000;
/** How often the pace is checked against Meta's recent rate-limit answers (marked on the messages they refused). */
const PACE_CHECK_MS = 1_000;
const PACE = { recentMs: 60_000, settleMs: 5_000, minFactor: 1 / 64 };
const DAY_MS = 86_400_000;

export interface PageDeps extends RowDeps {
  settings: BulkSendSettings;
  /** The sending number the limits are Meta's for (WHATSAPP_PHONE_NUMBER_ID; `console` without one). */
  sender: string;
  /** Called while the page works, so a worker that dies is noticed (the activity's heartbeat). */
  heartbeat?: (details: unknown) => void;
}

/**
 * One page of a bulk send: the next rows after `afterRow`, as many as the messaging tier's share lets through
 * (reserved first, under one lock per sending number), each made and sent in a throughput slot of its own (the
 * share of WhatsApp's messages per second, slowed while Meta answers with rate-limit errors), `concurrency` at a
 * time. Rows are never failed for a rate limit: their notifications are retried by their own approval workflows.
 */
export async function runPage(
  deps: PageDeps,
  input: { bulkSendId: string; afterRow: number },
): Promise<PageResult> {
  const store = bulkSendStore(deps.db);
  const { settings } = deps;
  const bulk = await store.findUnscoped(input.bulkSendId);
  const stop = (cancelled: boolean, done = false): PageResult => ({
    afterRow: input.afterRow,
    done,
    cancelled,
  });
  if (!bulk || bulk.status === 'cancelled') return stop(true);
  if (!OPEN_BULK_STATUSES.includes(bulk.status)) return stop(false, true);
  const rows = await store.nextRows(bulk.id, input.afterRow, settings.pageSize);
  if (rows.length === 0) return stop(false, true);
  const version = (await templateStore(deps.db).findVersion(bulk.templateId, bulk.templateVersion))!;
  const notified = firstNotifiedRoles(version.roles, version.workflowType).map((r) => r.key);
  const phonesOf = (row: BulkSendRow) => [
    ...new Set(
      (row.input?.recipients ?? []).filter(([key]) => notified.includes(key)).map(([, r]) => r.phone),
    ),
  ];

  const tier = settings.tierRecipientsPerDay;
  const bulkCap = Math.floor(tier * settings.share);
  // A row that alone needs more recipients than the whole share would wait forever: it fails, with the reason.
  await failOversizedRows(store, bulk.id, rows, phonesOf, bulkCap);
  // Rows whose document exists already reserved their recipients when it was made.
  const fresh = rows.filter((r) => r.status === 'pending');
  const grant = await pacingStore(deps.db).reserveRecipients({
    sender: deps.sender,
    bulkSendId: bulk.id,
    rows: fresh.map(phonesOf),
    bulkCap,
    tier,
    windowMs: DAY_MS * settings.timeScale,
  });
  const allowed = new Set(fresh.slice(0, grant.granted).map((r) => r.number));
  const todo = rows.filter((r) => r.status === 'created' || allowed.has(r.number));
  // Only rows in order count as done: stop before the first row the tier holds back.
  const firstHeld = rows.find((r) => r.status !== 'failed' && !todo.includes(r));
  const batch = firstHeld ? todo.filter((r) => r.number < firstHeld.number) : todo;
  if (batch.length === 0 && grant.resumesAt) {
    await store.transition(bulk.id, ['queued', 'running'], 'paused_for_quota', {
      resumesAt: grant.resumesAt,
    });
    return { ...stop(false), pausedUntil: grant.resumesAt.toISOString() };
  }
  await store.transition(bulk.id, ['queued', 'paused_for_quota'], 'running', { resumesAt: null });

  const { finished, cancelled } = await sendBatch(deps, { bulk, version, batch, phonesOf });
  let afterRow = input.afterRow;
  for (const row of rows) {
    if (row.status !== 'failed' && !finished.has(row.number)) break;
    afterRow = row.number;
  }
  const more =
    firstHeld !== undefined || afterRow < rows[rows.length - 1]!.number || rows.length === settings.pageSize;
  return { afterRow, done: !cancelled && !more, cancelled };
}

/** Marks failed, with the reason, each pending row that alone needs more recipients than the bulk sends' share. */
async function failOversizedRows(
  store: BulkSendStore,
  bulkSendId: string,
  rows: BulkSendRow[],
  phonesOf: (row: BulkSendRow) => string[],
  bulkCap: number,
): Promise<void> {
  for (const row of rows.filter((r) => r.status === 'pending' && phonesOf(r).length > bulkCap)) {
    await store.setRow(bulkSendId, row.number, {
      status: 'failed',
      errors: {
        _: [
          `Its ${phonesOf(row).length} recipients are more than the bulk sends' share of the messaging tier (${bulkCap} a day)`,
        ],
      },
    });
    row.status = 'failed';
  }
}

/**
 * Makes and sends the batch's rows, `concurrency` at a time, each in a throughput slot of its own, until the page's
 * time is up or the bulk send is cancelled. Answers the rows finished and whether it was cancelled.
 */
async function sendBatch(
  deps: PageDeps,
  page: {
    bulk: BulkSend;
    version: TemplateVersion;
    batch: readonly BulkSendRow[];
    phonesOf: (row: BulkSendRow) => string[];
  },
): Promise<{ finished: Set<number>; cancelled: boolean }> {
  const { settings } = deps;
  const { bulk, version, batch, phonesOf } = page;
  const pacing = pacingStore(deps.db);
  const outbox = whatsAppMessagesStore(deps.db);
  const perSecond = settings.throughputPerSecond * settings.share;
  const deadline = Date.now() + PAGE_BUDGET_MS;
  let paceCheckedAt = 0;
  let cancelled = false;
  const finished = new Set<number>();
  let next = 0;
  const worker = async () => {
    for (let row = batch[next++]; row && !cancelled && Date.now() < deadline; row = batch[next++]) {
      if (Date.now() - paceCheckedAt > PACE_CHECK_MS) {
        paceCheckedAt = Date.now();
        const rateLimitedAt = await outbox.lastRateLimitedAt();
        await pacing.adjustPace({ sender: deps.sender, rateLimitedAt, ...PACE });
      }
      const messages = Math.max(1, phonesOf(row).length);
      const slot = await pacing.takeSlot({ sender: deps.sender, messages, perSecond });
      await waitUntil(slot, deps.heartbeat);
      const outcome = await processRow(deps, bulk, version, row.number);
      if (outcome === 'cancelled') cancelled = true;
      finished.add(row.number);
      deps.heartbeat?.({ row: row.number });
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, batch.length) }, worker));
  return { finished, cancelled };
}

/** Sleeps until `at`, heartbeating every few seconds on the way. */
async function waitUntil(at: Date, heartbeat?: (details: unknown) => void): Promise<void> {
  for (let left = at.getTime() - Date.now(); left > 0; left = at.getTime() - Date.now()) {
    await sleep(Math.min(left, 5_000));
    heartbeat?.({ waiting: true });
  }
}
