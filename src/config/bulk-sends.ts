import { z } from 'zod';
import { heartbeatSeconds } from './fields.ts';
import { defineSlice } from './slice.ts';

/** Templates and bulk send (BULK_SEND_*, WHATSAPP_TIER_*, WHATSAPP_THROUGHPUT_*). */
export interface BulkSendSettings {
  /** Rows one bulk send may have. */
  maxRows: number;
  /** Bytes of a bulk send's body (JSON rows or the CSV file), refused before it is parsed. */
  maxBytes: number;
  /** Rows the workflow hands one activity at a time. */
  pageSize: number;
  /** Pages one workflow run works through before it continues as new (its history stays bounded). */
  pagesPerRun: number;
  /** Rows of a page made and sent at the same time (the throughput share paces them all the same). */
  concurrency: number;
  /** The part of the messaging tier and of the throughput bulk sends may take (the rest is ordinary documents'). */
  share: number;
  /** Meta's messaging tier of the sending number: unique recipients of business-initiated messages per 24 h. */
  tierRecipientsPerDay: number;
  /** Meta's throughput of the sending number: messages per second. */
  throughputPerSecond: number;
  /** Multiplies the 24-hour window and the pauses it causes: 1, below it only in tests. */
  timeScale: number;
  /** How long a page's activity may go without a heartbeat before Temporal gives it up and runs it again. */
  heartbeatMs: number;
}

export interface BulkSendsConfig {
  bulkSends: BulkSendSettings;
}

export const bulkSendsSlice = defineSlice({
  title: 'Templates and bulk send',
  about: `The size of a list, how a batch is worked through, and WhatsApp's limits per sending number (messaging
tier: unique recipients per rolling 24 hours; throughput: messages per second), of which bulk sends take at most
BULK_SEND_QUOTA_SHARE so that ordinary documents' notifications are never delayed.`,
  env: {
    BULK_SEND_MAX_ROWS: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(5000)
      .describe('rows of one bulk send'),
    BULK_SEND_MAX_MB: z.coerce
      .number()
      .positive()
      .max(100)
      .default(5)
      .describe("a bulk send's body (JSON rows or the CSV file), refused before it is parsed"),
    BULK_SEND_PAGE_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(50)
      .describe('rows the workflow hands one activity at a time'),
    BULK_SEND_PAGES_PER_RUN: z.coerce
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(20)
      .describe('pages one workflow run works through before it continues as new'),
    BULK_SEND_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(64)
      .default(4)
      .describe('rows of a page made and sent at the same time'),
    BULK_SEND_QUOTA_SHARE: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(0.5)
      .describe('the part of the messaging tier and of the throughput bulk sends may take'),
    BULK_SEND_TIME_SCALE: z.coerce
      .number()
      .gt(0)
      .max(1)
      .default(1)
      .describe('multiplies the 24-hour window and its pauses: 1, below it only in tests'),
    BULK_SEND_HEARTBEAT_SECONDS: heartbeatSeconds(
      'how long a page of a bulk send may go without a heartbeat (every 5 s, or a third of this when shorter) before Temporal gives it up and runs it again: how soon a worker killed mid-page is noticed; below 30 only in tests',
    ),
    WHATSAPP_TIER_RECIPIENTS_PER_DAY: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000_000)
      .default(1000)
      .describe(
        "the sending number's messaging tier: unique recipients of business-initiated messages per 24 h",
      ),
    WHATSAPP_THROUGHPUT_MPS: z.coerce
      .number()
      .gt(0)
      .max(10_000)
      .default(80)
      .describe("the sending number's throughput: messages per second"),
  },
  build: (e): BulkSendsConfig => ({
    bulkSends: {
      maxRows: e.BULK_SEND_MAX_ROWS,
      maxBytes: Math.floor(e.BULK_SEND_MAX_MB * 1024 * 1024),
      pageSize: e.BULK_SEND_PAGE_SIZE,
      pagesPerRun: e.BULK_SEND_PAGES_PER_RUN,
      concurrency: e.BULK_SEND_CONCURRENCY,
      share: e.BULK_SEND_QUOTA_SHARE,
      tierRecipientsPerDay: e.WHATSAPP_TIER_RECIPIENTS_PER_DAY,
      throughputPerSecond: e.WHATSAPP_THROUGHPUT_MPS,
      timeScale: e.BULK_SEND_TIME_SCALE,
      heartbeatMs: e.BULK_SEND_HEARTBEAT_SECONDS * 1000,
    },
  }),
});
