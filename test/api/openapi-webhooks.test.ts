import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildOpenApiDocument } from '../../src/api/openapi-document.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { accountsStore } from '../../src/features/accounts/accounts-store.ts';
import { approversStore, type Approver } from '../../src/features/documents/approvers-store.ts';
import {
  documentEventsStore,
  fullEventData,
  type DocumentEvent,
} from '../../src/features/events/document-events-store.ts';
import { documentsStore, type Document } from '../../src/features/documents/documents-store.ts';
import { serializeApprover } from '../../src/features/documents/serialize.ts';
import { EMPTY_COUNTS } from '../../src/features/bulk-sends/bulk-send-store.ts';
import { serializeBulkSend } from '../../src/features/bulk-sends/serialize.ts';
import { documentEvents } from '../../src/features/events/document-events.ts';
import { createLogger } from '../../src/logger.ts';
import { SUBSCRIBABLE_EVENTS, TEST_EVENT, type WebhookEvent } from '../../src/features/webhooks/events.ts';
import { buildEventBody, testEventData } from '../../src/features/webhooks/payload.ts';
import {
  generateWebhookSecret,
  signStandardWebhook,
  signWebhook,
} from '../../src/features/webhooks/signature.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { insertDocument } from '../webhooks/support.ts';

/**
 * The document's top-level `webhooks`: an entry for every event the code delivers, and bodies built the way a
 * delivery builds them (events recorded by the event machinery, the body by the payload code) that validate
 * against the entry's schema. The schema is read from the document itself, its references resolved against
 * components, and compiled by zod's JSON Schema reader.
 */

interface Doc {
  webhooks: Record<string, { post: WebhookOperation }>;
  components: { schemas: Record<string, unknown> };
}
interface WebhookOperation {
  parameters: { name: string; in: string; required: boolean; schema: Record<string, unknown> }[];
  requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } };
}

let doc: Doc;
let tdb: TestDatabase;
const secrets = createSecretBox([{ id: 'test', key: randomBytes(32) }]);

beforeAll(async () => {
  doc = (await buildOpenApiDocument()) as unknown as Doc;
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

function validatorOf(schema: unknown): z.ZodType {
  const text = JSON.stringify({ ...(schema as object), $defs: doc.components.schemas });
  return z.fromJSONSchema(JSON.parse(text.replaceAll('#/components/schemas/', '#/$defs/')) as never);
}

const bodySchema = (event: string) =>
  validatorOf(doc.webhooks[event]!.post.requestBody.content['application/json'].schema);

function failures(event: string, body: string): string[] {
  const result = bodySchema(event).safeParse(JSON.parse(body));
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('the webhooks section of the OpenAPI document', () => {
  it('has one POST for every event the code delivers, and for nothing else', () => {
    const delivered: string[] = [...SUBSCRIBABLE_EVENTS, TEST_EVENT];
    expect(Object.keys(doc.webhooks).sort()).toEqual(delivered.sort());
  });

  it("documents every header a delivery carries, with patterns a real attempt's values match", () => {
    const secret = generateWebhookSecret();
    const body = '{"id":7}';
    const timestamp = 1_790_000_000;
    const sent: Record<string, string> = {
      'X-Wathiq-Event': 'document.created',
      'X-Wathiq-Timestamp': String(timestamp),
      'X-Wathiq-Signature': signWebhook({ secret, timestamp, body }),
      'X-Wathiq-Delivery': '7',
      'webhook-id': '7',
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signStandardWebhook({ secret, id: '7', timestamp, body }),
      'User-Agent': 'Wathiq-Webhooks/1',
    };
    const params = doc.webhooks['document.created']!.post.parameters;
    expect(params.map((p) => p.name).sort()).toEqual(Object.keys(sent).sort());
    for (const p of params) {
      expect(p.in).toBe('header');
      expect(validatorOf(p.schema).safeParse(sent[p.name]).success, p.name).toBe(true);
    }
    const signature = params.find((p) => p.name === 'X-Wathiq-Signature')!;
    expect(validatorOf(signature.schema).safeParse(sent['webhook-signature']).success).toBe(false);
  });

  it('accepts the body of every event as the event machinery records it and the payload code builds it', async () => {
    const account = await accountsStore(tdb.db).create({
      name: 'Acme',
      email: `${randomUUID()}@example.com`,
      passwordHash: 'x',
      plan: 'business',
    });
    const { document, approvers } = await insertDocument(tdb.db, account.id);
    const [delegate] = await approversStore(tdb.db).insertMany(document, [
      {
        nameAr: 'سارة',
        nameEn: 'Sara',
        phone: '966501234568',
        roleAr: null,
        roleEn: null,
        language: null,
        actionType: 'approve_only',
        orderIndex: 2,
        placement: null,
      },
    ]);
    const events = documentEvents({ db: tdb.db, logger: createLogger({ logLevel: 'silent' }), secrets });
    const approver = approvers[0]!;
    const record = async (event: WebhookEvent, extra: { approver?: Approver; more?: object } = {}) => {
      const key = `${event}:${randomUUID()}`;
      await events.inTransaction([key], async (trx) => {
        const locked = (await documentsStore(trx).findByIdUnscoped(document.id, {
          forUpdate: true,
        })) as Document;
        await events.record(trx, {
          event,
          dedupeKey: key,
          document: locked,
          ...(extra.approver ? { approver: extra.approver } : {}),
          ...(event === 'approver.delegated' ? { extra: { delegate: serializeApprover(delegate!) } } : {}),
          ...(extra.more ? { documentExtra: extra.more as Record<string, unknown> } : {}),
        });
      });
      return (await documentEventsStore(tdb.db).findByDedupeKey(key)) as DocumentEvent;
    };
    const bodyOf = (e: DocumentEvent, deliveryId: number) =>
      buildEventBody({
        deliveryId,
        event: e.event as WebhookEvent,
        sequence: e.sequence,
        createdAt: e.createdAt,
        data: fullEventData(e, secrets),
      });
    const signedFile = {
      download_url: 'https://wathiq.example/files/q3Xv9aJ0mC7tR2kLpW5yZg/WQT-2026-000042.pdf',
      filename: 'WQT-2026-000042.pdf',
      verification_url: 'https://wathiq.example/v/abc',
    };
    const aboutApprover = new Set<string>([
      'approver.notified',
      'approver.viewed',
      'approver.delegated',
      'approver.completed',
      'approver.rejected',
      'document.rejected',
    ]);
    const bodies = new Map<string, string>();
    let deliveryId = 1;
    const bulkSendEvents = new Set<string>(['bulk_send.completed', 'bulk_send.cancelled']);
    for (const event of SUBSCRIBABLE_EVENTS.filter((e) => bulkSendEvents.has(e))) {
      // An account's event, recorded as src/features/bulk-sends/bulk-send-events.ts records it.
      const at = new Date();
      const bulk = {
        id: randomUUID(),
        accountId: account.id,
        templateId: randomUUID(),
        templateVersion: 2,
        status: event === 'bulk_send.completed' ? ('completed' as const) : ('cancelled' as const),
        rowsTotal: 3,
        resumesAt: null,
        workflowId: 'bulk-send',
        cancelledAt: event === 'bulk_send.cancelled' ? at : null,
        completedAt: event === 'bulk_send.completed' ? at : null,
        createdAt: at,
        updatedAt: at,
      };
      const recorded = await documentEventsStore(tdb.db).recordAccountEvent({
        accountId: account.id,
        event,
        data: { bulk_send: serializeBulkSend(bulk, { ...EMPTY_COUNTS, rows: 3, sent: 3 }) },
        dedupeKey: `${event}:${bulk.id}`,
      });
      bodies.set(event, bodyOf(recorded, deliveryId++));
    }
    for (const event of SUBSCRIBABLE_EVENTS.filter((e) => !bulkSendEvents.has(e))) {
      const recorded = await record(event, {
        ...(aboutApprover.has(event) ? { approver } : {}),
        ...(event === 'document.approved' || event === 'document.download_rotated'
          ? { more: signedFile }
          : {}),
      });
      bodies.set(event, bodyOf(recorded, deliveryId++));
    }
    bodies.set(
      TEST_EVENT,
      buildEventBody({
        deliveryId,
        event: TEST_EVENT,
        sequence: null,
        createdAt: new Date(),
        data: testEventData({ id: randomUUID(), url: 'https://receiver.example/hooks' }),
      }),
    );

    for (const [event, body] of bodies) expect(failures(event, body), `${event}: ${body}`).toEqual([]);
    // Each schema says what its event carries: an approver event's body is no document event's, and back.
    expect(failures('document.created', bodies.get('approver.completed')!)).not.toEqual([]);
    expect(failures('approver.completed', bodies.get('document.sent')!)).not.toEqual([]);
    expect(failures('approver.completed', bodies.get('approver.delegated')!)).not.toEqual([]);
    expect(failures('document.sent', bodies.get(TEST_EVENT)!)).not.toEqual([]);
    expect(failures('document.sent', bodies.get('bulk_send.completed')!)).not.toEqual([]);
  });
});
