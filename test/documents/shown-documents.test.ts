import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verificationsStore, verificationUrl } from '../../src/features/approval/verifications-store.ts';
import { documentsStore } from '../../src/features/documents/documents-store.ts';
import { serializeDocument } from '../../src/features/documents/serialize.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import { createDraft, PHONE_A, PHONE_B, startDocumentsService, type DocumentsService } from './support.ts';

let service: DocumentsService;
let owner: TestAccount;

beforeAll(async () => {
  service = await startDocumentsService();
  owner = await service.createAccount();
});
afterAll(() => service.close());

/** What `serializeDocument` makes of the domain read, with the verification URL the API adds to approved ones. */
async function serialized(id: string): Promise<string> {
  const found = await documentsStore(service.database.db).findWithApprovers(owner.accountId, id);
  if (!found) throw new Error(`no document ${id}`);
  const token = await verificationsStore(service.database.db).tokenOf(id, service.deps.secrets);
  const url =
    found.document.status === 'approved' && token
      ? verificationUrl(service.config.http.publicBaseUrl, token)
      : undefined;
  return JSON.stringify(serializeDocument(found.document, found.approvers, { verificationUrl: url }));
}

/** The answer's `data`, exactly as the API wrote it. */
async function shown(id: string): Promise<string> {
  const res = await service.request(`/documents/${id}`, { account: owner });
  expect(res.status).toBe(200);
  const text = await res.text();
  const prefix = '{"success":true,"data":';
  expect(text.startsWith(prefix)).toBe(true);
  return text.slice(prefix.length, -1);
}

describe('GET /documents/{id} selects the representation itself', () => {
  it('answers byte for byte what serializeDocument makes of the document, in every state it shows', async () => {
    const db = service.database.db;
    const plain = await createDraft(service, owner, { title: 'Plain' });
    const full = await createDraft(service, owner, { title: 'Full' }, [
      { name: 'Ali', phone: PHONE_A },
      { name: 'Sara', phone: PHONE_B },
      { name: 'Omar', phone: '966561234567' },
    ]);
    const failed = await createDraft(service, owner, { title: 'Failed' });
    const retried = await createDraft(service, owner, { title: 'Retried' });

    // An approved document with everything the representation can show: a signature, cc, a template, a
    // verification token, approvers placed, half placed (shown unplaced), acted, delegated, tied on their order.
    const templateId = randomUUID();
    await db('templates').insert({ id: templateId, account_id: owner.accountId, current_version: 3 });
    const signature = {
      level: 'B-LTA',
      signed_at: '2026-11-22T09:41:00+00:00',
      certificate: {
        subject: 'CN=Wathiq',
        issuer: 'CN=CA',
        serial: '0a',
        not_after: '2027-11-22T00:00:00+00:00',
      },
      timestamp_authority: 'CN=TSA',
    };
    await db('documents')
      .where({ id: full.id })
      .update({
        status: 'approved',
        signature: JSON.stringify(signature),
        reminders: JSON.stringify({ enabled: true, interval_hours: 24, max: 3 }),
        allow_delegation: true,
        cc: JSON.stringify([{ name: 'Mona', language: 'ar', phone: '966571234567', extra: 'dropped' }]),
        template_id: templateId,
        template_version: 2,
        department: 'Legal',
        rejection_reason: null,
        sent_at: db.raw("now() - interval '2 days 0.999999 seconds'"),
        completed_at: db.raw("'2026-11-22T09:41:59.999999+03:00'::timestamptz"),
      });
    await verificationsStore(db).reserve(full.id, service.deps.secrets);
    const approvers = await db<{ id: string; document_id: string; order_index: number }>('approvers')
      .where({ document_id: full.id })
      .orderBy('order_index');
    await db('approvers')
      .where({ id: approvers[0]!.id })
      .update({
        placement_page: 1,
        placement_x: 0.1,
        placement_y: 72.25,
        placement_width: null,
        status: 'approved',
        acted_at: db.raw("'1999-12-31T23:59:59.5+00:00'::timestamptz"),
        notified_at: db.raw('now()'),
        action_channel: 'whatsapp',
      });
    await db('approvers').where({ id: approvers[1]!.id }).update({
      placement_page: 2,
      placement_x: 10,
      placement_y: null,
      placement_width: 120.5,
      status: 'delegated',
      delegated_to_id: approvers[2]!.id,
      delegation_reason: 'On leave',
      order_index: approvers[2]!.order_index,
    });
    await db('approvers')
      .where({ id: approvers[2]!.id })
      .update({ delegated_from_id: approvers[1]!.id, verification: 'whatsapp_otp' });

    await db('documents')
      .where({ id: failed.id })
      .update({
        finalization_state: 'failed',
        finalization_error: 'the signing service did not answer',
        finalization_failed_at: db.raw('now()'),
      });
    await db('documents')
      .where({ id: retried.id })
      .update({
        status: 'approved',
        finalization_state: 'succeeded',
        finalization_error: 'an earlier failure',
        finalization_failed_at: db.raw('now()'),
        signature: JSON.stringify(signature),
      });

    for (const id of [plain.id, full.id, failed.id, retried.id]) {
      expect(await shown(id), id).toBe(await serialized(id));
    }
    const fullShown = JSON.parse(await shown(full.id)) as Record<string, unknown>;
    expect(fullShown).toMatchObject({ status: 'approved', template: { id: templateId, version: 2 } });
    expect(fullShown.verification_url).toMatch(/\/v\//);
  });

  it('shows a voided document without the signature or verification URL it may still hold', async () => {
    const doc = await createDraft(service, owner, { title: 'Voided' });
    const db = service.database.db;
    await db('documents')
      .where({ id: doc.id })
      .update({ status: 'voided', signature: JSON.stringify({ level: 'B-B' }) });
    await verificationsStore(db).reserve(doc.id, service.deps.secrets);
    const text = await shown(doc.id);
    expect(text).toBe(await serialized(doc.id));
    expect(JSON.parse(text)).toMatchObject({ signature: null });
    expect(text).not.toContain('verification_url');
  });
});
