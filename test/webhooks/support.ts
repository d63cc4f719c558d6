import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import forge from 'node-forge';
import { expect } from 'vitest';
import type { Db } from '../../src/db/knex.ts';
import { approversStore, type Approver } from '../../src/features/documents/approvers-store.ts';
import { documentEventsStore, type DocumentEvent } from '../../src/features/events/document-events-store.ts';
import { documentsStore, type Document } from '../../src/features/documents/documents-store.ts';
import {
  webhookDeliveriesStore,
  type WebhookDelivery,
} from '../../src/features/webhooks/webhook-deliveries-store.ts';
import { serializeDocument } from '../../src/features/documents/serialize.ts';
import type { ReceivedRequest } from '../fakes/webhook-receiver.ts';
import type { TestAccount, TestService } from '../helpers/test-service.ts';

/** Shared by the webhook delivery and API tests: receivers, documents and events, and waiting for outcomes. */

/** Polls `check` until it stops throwing (a condition, not a length of time); fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

type GuideVerifier = (
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  rawBody: Buffer,
  toleranceSeconds?: number,
) => boolean;

let guideVerifier: Promise<GuideVerifier> | undefined;

/** `verifyWathiqWebhook` exactly as docs/webhooks.md prints it for customers. */
export function readmeVerifier(): Promise<GuideVerifier> {
  guideVerifier ??= (async () => {
    const guide = await readFile(path.resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');
    const at = guide.indexOf('<!-- verify-node');
    const start = guide.indexOf('```js\n', at) + '```js\n'.length;
    const code = guide.slice(start, guide.indexOf('\n```', start) + 1);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-guide-'));
    const file = path.join(dir, 'verify.mjs');
    await writeFile(file, code);
    const mod = (await import(pathToFileURL(file).href)) as { verifyWathiqWebhook: GuideVerifier };
    return mod.verifyWathiqWebhook;
  })();
  return guideVerifier;
}

/** Asserts that every request verifies with `secret` the way the guide tells customers to. */
export async function expectVerified(requests: readonly ReceivedRequest[], secret: string): Promise<void> {
  const verify = await readmeVerifier();
  for (const r of requests) {
    expect(verify(secret, r.headers, r.rawBody), `delivery ${String(r.headers['x-wathiq-delivery'])}`).toBe(
      true,
    );
  }
}

export const bodyOf = (r: ReceivedRequest) =>
  JSON.parse(r.rawBody.toString('utf8')) as {
    id: number;
    event: string;
    sequence: number | null;
    created_at: string;
    data: Record<string, unknown> & { document?: { id: string; status: string } };
  };

/**
 * A TCP gate in front of a receiver: a fixed port that refuses connections while closed (the receiver is
 * "down") and forwards them while open, so a webhook URL stays the same across the outage.
 */
export async function startGate(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  const port = await new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const p = (probe.address() as net.AddressInfo).port;
      probe.close(() => resolve(p));
    });
  });
  return {
    port,
    url: `http://127.0.0.1:${port}/hooks/wathiq`,
    async open() {
      server = net.createServer((client) => {
        const upstream = net.connect(targetPort, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, '127.0.0.1', () => resolve());
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    },
  };
}

export async function createWebhook(
  service: TestService,
  account: TestAccount,
  input: { url: string; events: string[] },
): Promise<{ id: string; secret: string }> {
  const res = await service.request('/webhooks', { method: 'POST', account, body: JSON.stringify(input) });
  const body = (await res.json()) as { data: { id: string; secret: string } };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data;
}

/** A draft document with one approver, straight through the stores (the documents API is not needed here). */
export async function insertDocument(
  db: Db,
  accountId: string,
): Promise<{ document: Document; approvers: Approver[] }> {
  const id = randomUUID();
  const document = await documentsStore(db).insert({
    id,
    accountId,
    reference: `WQT-2026-${String(Math.floor(Math.random() * 999_999)).padStart(6, '0')}`,
    titleAr: 'عقد توريد',
    titleEn: 'Supply contract',
    department: null,
    workflowType: 'sequential',
    expiresAt: new Date(Date.now() + 7 * 86_400_000),
    fileKey: `test/${id}.pdf`,
    fileName: 'contract.pdf',
    fileSha256: '0'.repeat(64),
    fileSize: 1234,
    pageCount: 1,
  });
  const approvers = await approversStore(db).insertMany(document, [
    {
      nameAr: 'علي',
      nameEn: 'Ali',
      phone: '966501234567',
      roleAr: null,
      roleEn: null,
      language: null,
      actionType: 'approve_only',
      orderIndex: 1,
      placement: null,
    },
  ]);
  return { document, approvers };
}

/** Records an event the way the activities and the documents API do. */
export function recordEvent(
  db: Db,
  document: Document,
  approvers: Approver[],
  event: string,
  extra: Record<string, unknown> = {},
): Promise<DocumentEvent> {
  return documentEventsStore(db).record({
    accountId: document.accountId,
    documentId: document.id,
    event,
    data: { document: { ...serializeDocument(document, approvers), ...extra } },
    dedupeKey: `${event}:${document.id}:${randomUUID()}`,
  });
}

export async function deliveriesOf(db: Db, webhookId: string): Promise<WebhookDelivery[]> {
  const rows = await db('webhook_deliveries').where({ webhook_id: webhookId }).orderBy('id').select('id');
  const store = webhookDeliveriesStore(db);
  return Promise.all(rows.map(async (r: { id: number }) => (await store.load(Number(r.id)))!));
}

/** Waits until the delivery has left `pending`; returns it with its attempts. */
export async function settled(db: Db, deliveryId: number, timeoutMs = 15_000) {
  const store = webhookDeliveriesStore(db);
  return eventually(async () => {
    const delivery = await store.load(deliveryId);
    expect(delivery?.status).not.toBe('pending');
    return { delivery: delivery!, attempts: await store.listAttempts(deliveryId) };
  }, timeoutMs);
}

/** A certificate for 127.0.0.1 signed by its own key: what no trust store accepts. */
export function selfSignedCertificate(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 3_600_000);
  const name = [{ name: 'commonName', value: '127.0.0.1' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  const key = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  cert.sign(forge.pki.privateKeyFromPem(key), forge.md.sha256.create());
  return { key, cert: forge.pki.certificateToPem(cert) };
}
