import type { Db, Knex } from '../../db/knex.ts';

/** The messaging tier: recipients reserved for bulk sends within its rolling window. */
function tierReservations(db: Db) {
  return {
    /**
     * Under one lock per sender: how many of `rows` (each its recipients' phones) fit the tier now, and those are
     * reserved; when none fits, when the window frees the oldest recipient. Each row is counted as if all its
     * recipients were new (a recipient messaged within the window costs nothing more, so this never overspends).
     */
    async reserveRecipients(input: {
      sender: string;
      bulkSendId: string;
      rows: readonly (readonly string[])[];
      /** The bulk sends' part of the tier, and the tier itself (ordinary documents keep the rest). */
      bulkCap: number;
      tier: number;
      windowMs: number;
    }): Promise<{ granted: number; resumesAt?: Date }> {
      const run = async (trx: Knex.Transaction) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
          `wathiq-bulk-tier:${input.sender}`,
        ]);
        const since = trx.raw(`now() - make_interval(secs => ?)`, [input.windowMs / 1000]);
        // Reservations older than two windows count for nothing: forget a bounded batch of them.
        await trx.raw(
          `DELETE FROM whatsapp_bulk_reservations WHERE id IN (
             SELECT id FROM whatsapp_bulk_reservations
              WHERE sender = ? AND reserved_at < now() - make_interval(secs => ?) LIMIT 1000)`,
          [input.sender, (2 * input.windowMs) / 1000],
        );
        const { rows } = await trx.raw<{ rows: { bulk: number; all: number; oldest: Date | null }[] }>(
          `WITH recent AS (
             SELECT phone, created_at AS at FROM whatsapp_messages WHERE direction = 'out' AND created_at > ?
             UNION ALL
             SELECT phone, reserved_at AS at FROM whatsapp_bulk_reservations WHERE sender = ? AND reserved_at > ?)
           SELECT (SELECT count(DISTINCT phone) FROM whatsapp_bulk_reservations
                    WHERE sender = ? AND reserved_at > ?)::int AS bulk,
                  (SELECT count(DISTINCT phone) FROM recent)::int AS all,
                  (SELECT min(at) FROM recent) AS oldest`,
          [since, input.sender, since, input.sender, since],
        );
        const { bulk, all, oldest } = rows[0]!;
        let room = Math.min(input.bulkCap - bulk, input.tier - all);
        let granted = 0;
        for (const phones of input.rows) {
          if (phones.length > room) break;
          room -= phones.length;
          granted += 1;
        }
        if (granted === 0) {
          const resumesAt = new Date((oldest ?? new Date()).getTime() + input.windowMs);
          return { granted, resumesAt };
        }
        const phones = input.rows.slice(0, granted).flat();
        if (phones.length)
          await trx('whatsapp_bulk_reservations').insert(
            phones.map((phone) => ({ sender: input.sender, phone, bulk_send_id: input.bulkSendId })),
          );
        return { granted };
      };
      return db.isTransaction ? run(db as Knex.Transaction) : (db as Knex).transaction(run);
    },
  };
}

/** The throughput share: slots one after another, at a pace Meta's rate-limit answers slow down. */
function throughputPacing(db: Db) {
  return {
    /**
     * The start of a slot for `messages` messages in the throughput share (`perSecond` at full pace, slowed by the
     * sender's factor): the slots of every bulk send of the sender follow one another without overlap.
     */
    async takeSlot(input: { sender: string; messages: number; perSecond: number }): Promise<Date> {
      await db.raw('INSERT INTO whatsapp_bulk_pacing (sender) VALUES (?) ON CONFLICT (sender) DO NOTHING', [
        input.sender,
      ]);
      const { rows } = await db.raw<{ rows: { slot_at: Date }[] }>(
        `WITH old AS (
           SELECT sender, greatest(next_slot_at, clock_timestamp()) AS slot_at, rate_factor
             FROM whatsapp_bulk_pacing WHERE sender = ? FOR UPDATE)
         UPDATE whatsapp_bulk_pacing p
            SET next_slot_at = old.slot_at + make_interval(secs => ? / (? * old.rate_factor))
           FROM old WHERE p.sender = old.sender
         RETURNING old.slot_at`,
        [input.sender, input.messages, input.perSecond],
      );
      return rows[0]!.slot_at;
    },

    /**
     * Halves the sender's pace when Meta refused a send for a rate limit (`rateLimitedAt`) since the pace last
     * changed and within the last `recentMs`, at most once per `settleMs`; otherwise brings it back up by a quarter
     * per `settleMs` to full pace. A refusal counts once: the pace halves again only for a newer one. Returns the
     * factor.
     */
    async adjustPace(input: {
      sender: string;
      rateLimitedAt: Date | null;
      recentMs: number;
      settleMs: number;
      minFactor: number;
    }): Promise<number> {
      await db.raw('INSERT INTO whatsapp_bulk_pacing (sender) VALUES (?) ON CONFLICT (sender) DO NOTHING', [
        input.sender,
      ]);
      const { rows } = await db.raw<{ rows: { rate_factor: number }[] }>(
        `WITH throttled AS (
           SELECT p.sender,
                  coalesce(?::timestamptz > greatest(p.factor_changed_at,
                                                     clock_timestamp() - make_interval(secs => ?)), false) AS hit
             FROM whatsapp_bulk_pacing p WHERE p.sender = ?)
         UPDATE whatsapp_bulk_pacing p
            SET rate_factor = CASE WHEN throttled.hit THEN greatest(?, p.rate_factor / 2)
                                   ELSE least(1, p.rate_factor * 1.25) END,
                factor_changed_at = clock_timestamp()
           FROM throttled
          WHERE p.sender = throttled.sender
            AND p.factor_changed_at < clock_timestamp() - make_interval(secs => ?)
            AND (throttled.hit OR p.rate_factor < 1)
         RETURNING p.rate_factor`,
        [input.rateLimitedAt, input.recentMs / 1000, input.sender, input.minFactor, input.settleMs / 1000],
      );
      if (rows[0]) return rows[0].rate_factor;
      const current = await db('whatsapp_bulk_pacing')
        .where({ sender: input.sender })
        .first<{ rate_factor: number }>();
      return current?.rate_factor ?? 1;
    },
  };
}

/**
 * WhatsApp's limits per sending number as bulk sends share them: `whatsapp_bulk_reservations` (the recipients bulk
 * sends reserved, for the messaging tier's rolling window) and `whatsapp_bulk_pacing` (the next free slot of the
 * throughput share, and the factor Meta's rate-limit answers slowed it by). It also reads `whatsapp_messages`, the
 * outbox every message goes through: the tier counts every unique recipient, ordinary documents' too, and the
 * outbox records Meta's refusals with their codes.
 */
export function pacingStore(db: Db) {
  return { ...tierReservations(db), ...throughputPacing(db) };
}
