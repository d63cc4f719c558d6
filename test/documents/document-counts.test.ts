import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccount } from '../helpers/test-service.ts';
import { createDraft, pageOf, startDocumentsService, type DocumentsService } from './support.ts';

let service: DocumentsService;
beforeAll(async () => {
  service = await startDocumentsService();
});
afterAll(() => service.close());

const STATUSES = ['draft', 'pending', 'in_progress', 'approved', 'rejected', 'expired', 'voided'] as const;

/** Each total the list reports (all, and per status) next to what counting the rows gives. */
async function totals(
  account: TestAccount,
): Promise<{ listed: Record<string, number>; counted: Record<string, number> }> {
  const listed: Record<string, number> = {};
  const counted: Record<string, number> = {};
  for (const status of ['', ...STATUSES]) {
    const res = await service.request(`/documents?per_page=1${status ? `&status=${status}` : ''}`, {
      account,
    });
    listed[status || 'all'] = pageOf(await res.json()).meta.total;
    const q = service.database.db('documents').where({ account_id: account.accountId });
    const [row] = await (status ? q.andWhere({ status }) : q).count<{ n: string }[]>({ n: '*' });
    counted[status || 'all'] = Number(row?.n);
  }
  return { listed, counted };
}

describe('the list total (migration 025 counters)', () => {
  it('follows inserts, status changes of several rows at once, deletes and rollbacks, per status', async () => {
    const account = await service.createAccount();
    const other = await service.createAccount();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await createDraft(service, account, { title: `Doc ${i}` })).id);
    await createDraft(service, other, { title: 'Elsewhere' });
    const db = service.database.db;

    let t = await totals(account);
    expect(t.listed).toEqual(t.counted);
    expect(t.listed.all).toBe(4);

    // One statement moving rows to different statuses.
    await db.raw(
      `UPDATE documents SET status = CASE id WHEN ? THEN 'pending' WHEN ? THEN 'approved' ELSE status END
        WHERE id IN (?, ?, ?)`,
      [ids[0]!, ids[1]!, ids[0]!, ids[1]!, ids[2]!],
    );
    t = await totals(account);
    expect(t.listed).toEqual(t.counted);
    expect(t.listed).toMatchObject({ all: 4, draft: 2, pending: 1, approved: 1 });

    // A change rolled back leaves the totals as they were.
    await db
      .transaction(async (trx) => {
        await trx('documents').where({ id: ids[3]! }).update({ status: 'voided' });
        await trx('documents').where({ id: ids[2]! }).delete();
        throw new Error('roll back');
      })
      .catch(() => undefined);
    t = await totals(account);
    expect(t.listed).toEqual(t.counted);
    expect(t.listed).toMatchObject({ all: 4, voided: 0 });

    // A draft deleted through the API, and a row deleted in SQL.
    expect((await service.request(`/documents/${ids[3]!}`, { account, method: 'DELETE' })).status).toBe(200);
    await db('documents').where({ id: ids[1]! }).delete();
    t = await totals(account);
    expect(t.listed).toEqual(t.counted);
    expect(t.listed).toMatchObject({ all: 2, draft: 1, pending: 1, approved: 0 });

    // The other account's documents never counted here.
    const elsewhere = await totals(other);
    expect(elsewhere.listed).toEqual(elsewhere.counted);
    expect(elsewhere.listed.all).toBe(1);
  });
});
