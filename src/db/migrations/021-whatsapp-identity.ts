import type { Knex } from 'knex';

/**
 * The approver's WhatsApp identity besides the phone number: `wa_id` (the WhatsApp user id Meta puts in inbound
 * `contacts[].wa_id`) and the business-scoped user id (`contacts[].user_id`, Meta's "BSUID", e.g.
 * `SA.1502576394655843`). Meta is introducing usernames: a user who adopts one may reply without the phone number,
 * and the BSUID is then the only stable handle. Both are stored the first time a reply is matched to the approver,
 * and a later reply to the same number in the account is matched on the phone or on either of them
 * (src/features/approval/apply-whatsapp-reply.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('approvers', (t) => {
    t.string('wa_id', 20);
    t.string('whatsapp_user_id', 140);
  });
  // A reply without the number is matched against the ids stored for the approver's number in the account.
  await knex.raw(`CREATE INDEX approvers_whatsapp_identity_index ON approvers (account_id, phone)
    WHERE wa_id IS NOT NULL OR whatsapp_user_id IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS approvers_whatsapp_identity_index');
  await knex.schema.alterTable('approvers', (t) => {
    t.dropColumn('whatsapp_user_id');
    t.dropColumn('wa_id');
  });
}
