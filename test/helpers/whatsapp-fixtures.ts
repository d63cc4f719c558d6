import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import type { Knex } from '../../src/db/knex.ts';
import type { ApprovalNotice } from '../../src/whatsapp/types.ts';

export const templates = loadConfig({ NODE_ENV: 'test' }).whatsapp.templates;

/** A link token as the approval page issues them: 128 random bits, base64url. */
export const newToken = () => randomBytes(16).toString('base64url');

export function notice(overrides: Partial<ApprovalNotice> = {}): ApprovalNotice {
  return {
    kind: 'approval_request',
    accountId: randomUUID(),
    documentId: randomUUID(),
    approverId: randomUUID(),
    phone: '966501234567',
    language: 'ar',
    approverName: 'سارة القحطاني',
    documentTitle: 'عقد توريد',
    reference: 'WQT-2026-000042',
    linkToken: newToken(),
    actionType: 'sign',
    idempotencyKey: `test:${randomUUID()}`,
    ...overrides,
  };
}

/** Rows the whatsapp_messages foreign keys need: an account, a document, and its approvers. */
export async function seedDocument(db: Knex, approverCount = 2) {
  const [account] = await db('accounts')
    .insert({ name: 'WA Test', email: `wa-${randomUUID()}@example.test`, password_hash: 'x', plan: 'basic' })
    .returning<{ id: string }[]>('id');
  const [document] = await db('documents')
    .insert({
      account_id: account!.id,
      reference: `WQT-2026-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`,
      title_ar: 'عقد توريد',
      title_en: 'Supply contract',
      expires_at: new Date(Date.now() + 7 * 86_400_000),
      file_key: 'k',
      file_sha256: '0'.repeat(64),
      file_size: 1,
      page_count: 1,
    })
    .returning<{ id: string }[]>('id');
  const approvers = await db('approvers')
    .insert(
      Array.from({ length: approverCount }, (_, i) => ({
        document_id: document!.id,
        account_id: account!.id,
        name_ar: `معتمد ${i + 1}`,
        name_en: `Approver ${i + 1}`,
        phone: `96650000000${i}`,
        order_index: i + 1,
      })),
    )
    .returning<{ id: string; phone: string }[]>(['id', 'phone']);
  return { accountId: account!.id, documentId: document!.id, approvers };
}
