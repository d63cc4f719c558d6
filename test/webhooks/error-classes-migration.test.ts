import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryAttemptResource } from '../../src/features/webhooks/schemas.ts';
import { rewriteWebhookAttemptErrors } from '../../src/db/migrations/007-exposures.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { webhookDeliveriesStore } from '../../src/features/webhooks/webhook-deliveries-store.ts';
import { webhooksStore } from '../../src/features/webhooks/webhooks-store.ts';
import { serializeAttempt } from '../../src/features/webhooks/serialize.ts';
import { generateWebhookSecret } from '../../src/features/webhooks/signature.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';

/** Migration 007 rewrites attempts recorded before the error classes, so the deliveries list shows no raw errors. */

let tdb: TestDatabase;
const box = createSecretBox([{ id: 'test', key: randomBytes(32) }]);
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('migration 007: webhook attempt errors', () => {
  it('renames the old classes and replaces messages that quoted socket errors', async () => {
    const account = await accountsStore(tdb.db).create({
      name: 'Acme',
      email: `${randomUUID()}@example.com`,
      passwordHash: 'x',
      plan: 'business',
    });
    const hook = await webhooksStore(tdb.db).create(
      {
        accountId: account.id,
        url: 'https://hooks.example.com/a',
        events: ['document.sent'],
        secret: generateWebhookSecret(),
      },
      box,
    );
    const deliveries = webhookDeliveriesStore(tdb.db);
    const { delivery } = await deliveries.createOnce(
      {
        webhookId: hook.id,
        accountId: account.id,
        eventId: null,
        event: 'webhook.test',
        body: () => '{}',
      },
      box,
    );
    // What earlier versions recorded, raw socket errors included.
    const old: [number | null, string | null, string | null][] = [
      [null, 'connection', 'ECONNREFUSED: connect ECONNREFUSED 10.0.0.7:5432'],
      [null, 'connection', 'socket hang up'],
      [
        null,
        'forbidden_address',
        'db.internal resolves to 10.0.0.7, which is not a public address (private)',
      ],
      [
        302,
        'redirect',
        'Receiver answered 302 (Location: http://10.0.0.7/admin); redirects are not followed',
      ],
      [
        null,
        'tls',
        "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match certificate's altnames: IP: 10.0.0.7",
      ],
      [null, 'dns', 'DNS lookup of db.internal failed: getaddrinfo ENOTFOUND db.internal'],
      [null, 'timeout', 'No answer within 10000 ms'],
      [500, 'http_status', 'Receiver answered 500'],
      [410, 'http_status', 'Receiver answered 410 Gone'],
      [204, null, null],
    ];
    await tdb.db('webhook_delivery_attempts').insert(
      old.map(([status, errorClass, message], i) => ({
        delivery_id: delivery.id,
        attempt_number: i + 1,
        started_at: new Date(),
        status_code: status,
        duration_ms: 5,
        error_class: errorClass,
        error_message: message,
      })),
    );

    await rewriteWebhookAttemptErrors(tdb.db);

    const attempts = (await deliveries.listAttempts(delivery.id)).map(serializeAttempt);
    // Every row now fits the API's description of an attempt.
    for (const a of attempts) DeliveryAttemptResource.parse(a);
    expect(attempts.map((a) => [a.status_code, a.error_class, a.error_message])).toEqual([
      [
        null,
        'connection_refused',
        'The receiver refused the connection (nothing accepts connections on that port)',
      ],
      [null, 'connection_failed', 'The connection to the receiver failed before it answered'],
      [
        null,
        'blocked_address',
        'The webhook URL leads to an address that is not public (loopback, private, link-local or reserved); webhooks reach public addresses only',
      ],
      [
        302,
        'http_status',
        'Receiver answered 302; redirects are not followed, point the webhook at the final URL',
      ],
      [null, 'tls', 'TLS: the handshake with the receiver failed'],
      [null, 'dns', 'The webhook URL’s host name did not resolve'],
      [null, 'timeout', 'No answer within 10000 ms'],
      [500, 'http_status', 'Receiver answered 500'],
      [410, 'http_status', 'Receiver answered 410 Gone'],
      [204, null, null],
    ]);
    expect(JSON.stringify(attempts)).not.toMatch(/10\.0\.0\.7|db\.internal|ECONN|5432/);
  });
});
