import type { Knex } from 'knex';

/**
 * Exposures found in review:
 * - An idempotency key belongs to the API key that used it, not only to its account: another key of the same
 *   account sending the same Idempotency-Key runs as a new request under its own record and never receives the
 *   first key's stored response. Rows from before (a 24-hour cache that did not record the key) are dropped.
 * - Webhook attempts say why they failed by class, in Wathiq's own words: the classes `connection`,
 *   `forbidden_address` and `redirect` become `connection_refused` / `connection_failed`, `blocked_address` and
 *   `http_status`, and earlier messages, which could quote socket errors with addresses and ports, are rewritten.
 */
export async function up(knex: Knex): Promise<void> {
  await knex('idempotency_keys').delete();
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.uuid('api_key_id').notNullable().references('api_keys.id').onDelete('CASCADE');
    t.dropUnique(['account_id', 'key']);
    t.unique(['api_key_id', 'key']);
    t.index(['account_id']);
  });
  await rewriteWebhookAttemptErrors(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex('idempotency_keys').delete();
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropIndex(['account_id']);
    t.dropUnique(['api_key_id', 'key']);
    t.dropColumn('api_key_id');
    t.unique(['account_id', 'key']);
  });
  // The old classes come back; the old messages do not (they were not kept).
  await knex.raw(`
    UPDATE webhook_delivery_attempts SET error_class = CASE
      WHEN error_class = 'blocked_address' THEN 'forbidden_address'
      WHEN error_class IN ('connection_refused', 'connection_failed') THEN 'connection'
      WHEN error_class = 'http_status' AND status_code BETWEEN 300 AND 399 THEN 'redirect'
      ELSE error_class END
    WHERE error_class IN ('blocked_address', 'connection_refused', 'connection_failed', 'http_status')`);
}

const BLOCKED_ADDRESS =
  'The webhook URL leads to an address that is not public (loopback, private, link-local or reserved); webhooks reach public addresses only';

/** The attempts recorded before the error classes: new class names, and Wathiq's sentence for each. */
export async function rewriteWebhookAttemptErrors(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE webhook_delivery_attempts SET error_class = CASE
      WHEN error_class = 'forbidden_address' THEN 'blocked_address'
      WHEN error_class = 'redirect' THEN 'http_status'
      WHEN error_class = 'connection' AND error_message LIKE '%ECONNREFUSED%' THEN 'connection_refused'
      WHEN error_class = 'connection' THEN 'connection_failed'
      ELSE error_class END
    WHERE error_class IN ('forbidden_address', 'redirect', 'connection')`);
  await knex.raw(
    `UPDATE webhook_delivery_attempts SET error_message = CASE error_class
       WHEN 'http_status' THEN 'Receiver answered ' || status_code || '; redirects are not followed, point the webhook at the final URL'
       WHEN 'blocked_address' THEN ?
       WHEN 'connection_refused' THEN 'The receiver refused the connection (nothing accepts connections on that port)'
       WHEN 'connection_failed' THEN 'The connection to the receiver failed before it answered'
       WHEN 'dns' THEN 'The webhook URL’s host name did not resolve'
       WHEN 'tls' THEN 'TLS: the handshake with the receiver failed'
       ELSE error_message END
     WHERE error_class IN ('blocked_address', 'connection_refused', 'connection_failed', 'dns', 'tls')
        OR (error_class = 'http_status' AND status_code BETWEEN 300 AND 399)`,
    [BLOCKED_ADDRESS],
  );
}
