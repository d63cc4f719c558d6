import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWathiqClient, unwrap, WathiqError } from '../../clients/typescript/src/index.ts';
import { eventually } from '../helpers/approval-flow.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';
import { approveInInbox, fetchPublic, sha256, verifiedSha256 } from './support.ts';

/**
 * clients/typescript runs the quickstart against the live service: create with two approvers, send, act through
 * the development inbox, follow the status, download the signed file and check its SHA-256.
 */

let service: TestService;
let account: TestAccount;
beforeAll(async () => {
  // A loopback HOST: the console WhatsApp provider and its /dev/inbox.
  service = await startTestService({ env: { HOST: '127.0.0.1' } });
  account = await service.createAccount({ plan: 'enterprise' });
});
afterAll(() => service.close());

describe('the TypeScript client', () => {
  it('takes a document from upload to a signed download', async () => {
    const root = service.api.url;
    const client = createWathiqClient({ baseUrl: root, apiKey: account.key, apiSecret: account.secret });
    const { api } = client;

    const created = await client.createDocument({
      title_ar: 'عقد توريد',
      title_en: 'Supply contract',
      workflow_type: 'sequential',
      approvers: [
        { name: 'Sara', phone: '+966501234567', action_type: 'approve_only', notify: true },
        { name_ar: 'عمر', name_en: 'Omar', phone: '966551234567', action_type: 'approve_only' },
      ],
      reminders: { first_after_hours: 24, every_hours: 24, max: 1 },
      file: await makePdf(2),
      filename: 'contract.pdf',
    });
    expect(created.status).toBe('draft');
    expect(created.title_ar).toBe('عقد توريد');
    expect(created.approvers.map((a) => a.name_en)).toEqual(['Sara', 'Omar']);

    const sent = await unwrap(api.POST('/documents/{id}/send', { params: { path: { id: created.id } } }));
    expect(sent.status).toBe('pending');

    for (const approver of created.approvers) {
      const link = await eventually(async () => {
        const got = await unwrap(api.GET('/approvers/{id}/link', { params: { path: { id: approver.id } } }));
        return got.usable_now ? got : undefined;
      }, 60_000);
      await approveInInbox(root, link.url.replace(/^.*\/a\//, ''));
    }

    const status = await eventually(async () => {
      const now = await unwrap(api.GET('/documents/{id}/status', { params: { path: { id: created.id } } }));
      return now.status === 'approved' ? now : undefined;
    }, 120_000);
    expect(status.progress).toMatchObject({ completed: 2, total: 2 });

    const download = await unwrap(
      api.GET('/documents/{id}/download', { params: { path: { id: created.id } } }),
    );
    const file = new Uint8Array(await (await fetchPublic(root, download.download_url)).arrayBuffer());
    expect(Buffer.from(file.subarray(0, 5)).toString()).toBe('%PDF-');
    const document = await unwrap(api.GET('/documents/{id}', { params: { path: { id: created.id } } }));
    expect(document.verification_url).toEqual(expect.any(String));
    expect(sha256(file)).toBe(await verifiedSha256(root, document.verification_url!));
    expect(sha256(file)).not.toBe(created.file.sha256);
  }, 300_000);

  it('reports the error envelope as a WathiqError with the field details', async () => {
    const client = createWathiqClient({
      baseUrl: service.api.url,
      apiKey: account.key,
      apiSecret: account.secret,
    });
    const refused = await client
      .createDocument({ title: 'x', approvers: [{ name: 'Sara', phone: '12' }], file: await makePdf(1) })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(WathiqError);
    expect((refused as WathiqError).status).toBe(422);
    const details = ((refused as WathiqError).body as { error: { details: Record<string, string[]> } }).error
      .details;
    expect(Object.keys(details)).toEqual(['approvers.0.phone']);
  });
});
