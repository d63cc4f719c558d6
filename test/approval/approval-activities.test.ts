import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { createApprovalActivities } from '../../src/features/approval/activities/index.ts';
import { createSecretBox } from '../../src/auth/secret-box.ts';
import { actionEvidenceStore } from '../../src/features/approval/action-evidence-store.ts';
import type { DocumentEvent } from '../../src/features/events/document-events-store.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createConsoleProvider } from '../../src/whatsapp/index.ts';
import { createDb, type Knex } from '../../src/db/knex.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { seedDocument } from '../helpers/whatsapp-fixtures.ts';

/** The approval activities called directly, twice where Temporal would retry them: the second call changes nothing. */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

function activities(onEvent: (e: DocumentEvent) => Promise<void>, db: Knex = database.db) {
  const logger = createLogger({ logLevel: 'silent' });
  const templates = loadConfig({ NODE_ENV: 'test' }).whatsapp.templates;
  return createApprovalActivities({
    db,
    logger,
    secrets: createSecretBox([{ id: 'test', key: randomBytes(32) }]),
    whatsapp: { provider: createConsoleProvider({ logger, templates }), templates },
    onEvent,
  });
}

describe('approval activities are idempotent', () => {
  it('a retry after the hand-over to webhooks failed hands the same event over again, recording it once', async () => {
    const { documentId } = await seedDocument(database.db, 1);
    const handed: DocumentEvent[] = [];
    let fail = true;
    const a = activities((e) => {
      if (fail) {
        fail = false;
        return Promise.reject(new Error('Temporal unreachable'));
      }
      handed.push(e);
      return Promise.resolve();
    });
    await expect(a.markDocumentSent({ documentId, workflowId: `document-${documentId}` })).rejects.toThrow(
      /unreachable/,
    );
    await a.markDocumentSent({ documentId, workflowId: `document-${documentId}` });
    expect(handed.map((e) => e.event)).toEqual(['document.sent']);
    expect(
      await database.db('document_events').where({ document_id: documentId, event: 'document.sent' }),
    ).toHaveLength(1);
    expect(
      (await database.db('documents').where({ id: documentId }).first<{ status: string }>()).status,
    ).toBe('pending');
  });

  it('recording an action twice keeps the first evidence and one event', async () => {
    const { documentId, approvers } = await seedDocument(database.db, 2);
    const a = activities(() => Promise.resolve());
    await a.markDocumentSent({ documentId, workflowId: `document-${documentId}` });
    const first = {
      at: '2026-11-22T09:41:00.000Z',
      channel: 'page' as const,
      ip: '203.0.113.7',
      typedName: 'First',
    };
    await a.recordApproverAction({
      documentId,
      approverId: approvers[0]!.id,
      kind: 'complete',
      evidence: first,
    });
    await a.recordApproverAction({
      documentId,
      approverId: approvers[0]!.id,
      kind: 'complete',
      evidence: { ...first, at: '2026-11-22T10:00:00.000Z', typedName: 'Second' },
    });
    const row = await database
      .db('approvers')
      .where({ id: approvers[0]!.id })
      .first<{ typed_name: string; acted_at: Date }>();
    expect(row.typed_name).toBe('First');
    expect(row.acted_at.toISOString()).toBe(first.at);
    expect(
      await database.db('document_events').where({ document_id: documentId, event: 'approver.completed' }),
    ).toHaveLength(1);
    expect(
      (await database.db('documents').where({ id: documentId }).first<{ status: string }>()).status,
    ).toBe('in_progress');
  });

  it('an action by reference reads its stored evidence, marks it accepted, and refuses another approver’s', async () => {
    const { documentId, approvers } = await seedDocument(database.db, 2);
    const a = activities(() => Promise.resolve());
    await a.markDocumentSent({ documentId, workflowId: `document-${documentId}` });
    const evidence = actionEvidenceStore(database.db);
    const first = { at: '2026-11-22T09:41:00.000Z', channel: 'page' as const, ip: '198.51.100.4' };
    const id = await evidence.submit({
      documentId,
      approverId: approvers[0]!.id,
      kind: 'complete',
      evidence: { ...first, userAgent: 'UA/1', typedName: 'Typed' },
    });
    // Another approver's action cannot borrow this evidence (a forged or mistaken id): refused for good.
    await expect(
      a.recordApproverAction({ documentId, approverId: approvers[1]!.id, kind: 'complete', evidenceId: id }),
    ).rejects.toMatchObject({ type: 'evidence_missing', nonRetryable: true });
    const input = { documentId, approverId: approvers[0]!.id, kind: 'complete' as const, evidenceId: id };
    await a.recordApproverAction(input);
    await a.recordApproverAction(input); // a retry changes nothing
    expect(
      await database.db('approvers').where({ id: approvers[0]!.id }).first<Record<string, unknown>>(),
    ).toMatchObject({
      status: 'completed',
      action_ip: first.ip,
      action_user_agent: 'UA/1',
      typed_name: 'Typed',
    });
    expect(await evidence.find(id)).toMatchObject({ state: 'accepted' });
    await evidence.discard(id); // an accepted row is never discarded
    expect(await evidence.find(id)).toMatchObject({ state: 'accepted' });
    expect(
      (await database.db('approvers').where({ id: approvers[1]!.id }).first<{ status: string }>()).status,
    ).not.toBe('completed');

    // An older worker drops the id from the update: the approver's latest submitted row is used.
    const second = await evidence.submit({
      documentId,
      approverId: approvers[1]!.id,
      kind: 'reject',
      evidence: { at: first.at, channel: 'page', reason: 'Not this one' },
    });
    await a.recordApproverAction({ documentId, approverId: approvers[1]!.id, kind: 'reject' });
    expect(await evidence.find(second)).toMatchObject({ state: 'accepted' });
    expect(
      await database.db('approvers').where({ id: approvers[1]!.id }).first<Record<string, unknown>>(),
    ).toMatchObject({ status: 'rejected', rejection_reason: 'Not this one' });
  });

  it('void, expiry and approval move only an open document, once', async () => {
    const { documentId } = await seedDocument(database.db, 1);
    const a = activities(() => Promise.resolve());
    await a.markDocumentSent({ documentId, workflowId: `document-${documentId}` });
    await a.markDocumentVoided({ documentId, at: new Date().toISOString() });
    await a.markDocumentVoided({ documentId, at: new Date().toISOString() });
    await a.markDocumentExpired({ documentId }); // too late: the document is voided
    const events = (
      await database.db('document_events').where({ document_id: documentId }).orderBy('id')
    ).map((e: { event: string }) => e.event);
    expect(events).toEqual(['document.sent', 'document.voided']);
    expect(
      (await database.db('documents').where({ id: documentId }).first<{ status: string }>()).status,
    ).toBe('voided');
  });
});

describe('the statements of beginApproval', () => {
  it('sends the first requests from the rows its own transaction read, and records them notified in one transaction', async () => {
    const { documentId, approvers } = await seedDocument(database.db, 2);
    // A pool of its own, so only these activities' statements are counted, each with its transaction (if any).
    const counted = createDb(database.url, { poolMax: 4 });
    const statements: { sql: string; inTransaction: boolean }[] = [];
    counted.on('query', (q: { sql: string; __knexTxId?: string }) =>
      statements.push({ sql: q.sql, inTransaction: q.__knexTxId !== undefined }),
    );
    try {
      const begun = await activities(() => Promise.resolve(), counted).beginApproval({
        documentId,
        workflowId: `document-${documentId}`,
        notices: approvers.map((a) => ({
          documentId,
          approverId: a.id,
          kind: 'approval_request' as const,
          idempotencyKey: `request:${a.id}`,
        })),
      });
      expect(begun.notices.map((n) => 'result' in n && n.result.sent)).toEqual([true, true]);
      const outside = statements.filter((s) => !s.inTransaction).map((s) => s.sql);
      expect(
        outside.filter((sql) => /from "documents"|from "approvers" where "document_id"/i.test(sql)),
      ).toEqual([]);
      // The send's transaction, then one that records both approvers notified.
      expect(statements.filter((s) => /^BEGIN/i.test(s.sql))).toHaveLength(2);
      const events = await database
        .db('document_events')
        .where({ document_id: documentId, event: 'approver.notified' })
        .orderBy('sequence')
        .select<{ data: { document: { approvers: { status: string }[] } } }[]>('data');
      // Each event carries the approvers as its own write left them: the second sees the first notified too.
      expect(events.map((e) => e.data.document.approvers.map((a) => a.status))).toEqual([
        ['notified', 'waiting'],
        ['notified', 'notified'],
      ]);
      const rows = await database.db('approvers').where({ document_id: documentId }).select('status');
      expect(rows.map((r: { status: string }) => r.status)).toEqual(['notified', 'notified']);
    } finally {
      await counted.destroy();
    }
  });
});

describe('the statements of notifyApprover', () => {
  it('reads the document for the send without a row lock, which outside a transaction would guard nothing', async () => {
    const { documentId, approvers } = await seedDocument(database.db, 1);
    const counted = createDb(database.url, { poolMax: 4 });
    const statements: { sql: string; inTransaction: boolean }[] = [];
    counted.on('query', (q: { sql: string; __knexTxId?: string }) =>
      statements.push({ sql: q.sql, inTransaction: q.__knexTxId !== undefined }),
    );
    try {
      // One set of activities (one key), so the request opens the link token the send sealed.
      const a = activities(() => Promise.resolve(), counted);
      await a.markDocumentSent({ documentId, workflowId: `document-${documentId}` });
      statements.length = 0;
      const result = await a.notifyApprover({
        documentId,
        approverId: approvers[0]!.id,
        kind: 'approval_request',
        idempotencyKey: `request:${approvers[0]!.id}`,
      });
      expect(result).toMatchObject({ sent: true });
      const reads = statements.filter((s) => /from "documents"/i.test(s.sql));
      // The send's read, then the read under the lock of the transaction that records the approver notified.
      expect(reads.map((s) => [/for no key update/i.test(s.sql), s.inTransaction])).toEqual([
        [false, false],
        [true, true],
      ]);
    } finally {
      await counted.destroy();
    }
  });
});
