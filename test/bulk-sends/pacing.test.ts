import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import {
  whatsAppMessagesStore,
  type WhatsAppMessagesStore,
} from '../../src/db/stores/whatsapp-messages-store.ts';
import { pacingStore } from '../../src/features/bulk-sends/pacing-store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/**
 * The bulk-send pace against Meta's rate-limit answers: a refusal is marked on its message and stays marked when the
 * retry is accepted, the pace halves once per new refusal (at most once per settle time, down to a floor) and comes
 * back by a quarter per settle time without one.
 */
let database: TestDatabase;
let messages: WhatsAppMessagesStore;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);

beforeAll(async () => {
  database = await createTestDatabase();
  messages = whatsAppMessagesStore(database.db);
});
afterAll(async () => {
  await database?.drop();
});

const outbound = () => ({
  idempotencyKey: `pace-${randomUUID()}`,
  phone: '966500000001',
  kind: 'approval_request',
  payload: { text: 'hello' },
});
const refuse = (input: ReturnType<typeof outbound>, code: number) =>
  messages.recordSendFailure(
    { ...input, error: { message: 'refused', retryable: true, reason: 'graph_error', code } },
    box,
  );
const PACE = { recentMs: 60_000, settleMs: 0, minFactor: 1 / 8 };

describe('rate-limit marks', () => {
  it('a rate-limit refusal stays marked after its retry is accepted; other refusals mark nothing', async () => {
    const other = outbound();
    await refuse(other, 131026);
    const before = await messages.lastRateLimitedAt();

    const limited = outbound();
    await refuse(limited, 130429);
    await messages.recordOutbound({ ...limited, wamid: `wamid.${randomUUID()}` }, box);
    const row = await database
      .db('whatsapp_messages')
      .where({ idempotency_key: limited.idempotencyKey })
      .first<{ status: string; status_error: unknown; rate_limited_at: Date | null }>();
    expect(row.status).toBe('accepted');
    expect(row.status_error).toBeNull();
    expect(row.rate_limited_at).toBeInstanceOf(Date);
    expect(await messages.lastRateLimitedAt()).toEqual(row.rate_limited_at);

    const untouched = await database
      .db('whatsapp_messages')
      .where({ idempotency_key: other.idempotencyKey })
      .first<{ rate_limited_at: Date | null }>();
    expect(untouched.rate_limited_at).toBeNull();
    expect(before === null || before < row.rate_limited_at!).toBe(true);
  });
});

describe('the pace', () => {
  const pace = () => pacingStore(database.db);
  const adjust = async (sender: string, settleMs = 0) =>
    pace().adjustPace({ sender, rateLimitedAt: await messages.lastRateLimitedAt(), ...PACE, settleMs });

  it('halves once per new refusal, comes back by a quarter without one, and stops at the floor', async () => {
    const sender = `sender-${randomUUID()}`;
    await pace().adjustPace({ sender, rateLimitedAt: null, ...PACE });
    await refuse(outbound(), 131056);
    expect(await adjust(sender)).toBe(0.5);
    // The same refusal again: it counted once, so the pace comes back up.
    expect(await adjust(sender)).toBe(0.625);
    await refuse(outbound(), 131048);
    expect(await adjust(sender)).toBe(0.3125);
    // Within the settle time nothing changes, refusal or not.
    await refuse(outbound(), 130429);
    expect(await adjust(sender, 60_000)).toBe(0.3125);
    for (let i = 0; i < 5; i++) {
      await refuse(outbound(), 130429);
      await adjust(sender);
    }
    expect(await pace().adjustPace({ sender, rateLimitedAt: null, ...PACE, settleMs: 60_000 })).toBe(1 / 8);
    for (let i = 0; i < 12; i++) await pace().adjustPace({ sender, rateLimitedAt: null, ...PACE });
    expect(await pace().adjustPace({ sender, rateLimitedAt: null, ...PACE })).toBe(1);
  });

  it('a refusal older than the recent window does not slow the pace', async () => {
    const sender = `sender-${randomUUID()}`;
    await pace().adjustPace({ sender, rateLimitedAt: null, ...PACE });
    const old = new Date(Date.now() - 120_000);
    expect(await pace().adjustPace({ sender, rateLimitedAt: old, ...PACE })).toBe(1);
    expect(await pace().adjustPace({ sender, rateLimitedAt: new Date(), ...PACE })).toBe(0.5);
  });
});
