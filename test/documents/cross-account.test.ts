import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentForm } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import {
  createDraft,
  expectError,
  PHONE_A,
  startDocumentsService,
  type DocumentJson,
  type DocumentsService,
} from './support.ts';

let service: DocumentsService;
let owner: TestAccount;
let stranger: TestAccount;
let doc: DocumentJson;
let operations: { method: string; path: string }[];

beforeAll(async () => {
  service = await startDocumentsService();
  owner = await service.createAccount();
  stranger = await service.createAccount();
  doc = await createDraft(service, owner);
  const openapi = (await (await service.request('/openapi.json')).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  // Every documented operation on one document or one approver, including those other routers add.
  operations = Object.entries(openapi.paths)
    .filter(([path]) => /^\/(documents\/\{(id|documentId)\}|approvers\/\{id\})/.test(path))
    .flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path })),
    );
});
afterAll(() => service.close());

function bodyFor(
  method: string,
  path: string,
): { body?: string | FormData; headers?: Record<string, string> } {
  if (method === 'GET' || method === 'DELETE') return {};
  if (path === '/documents/{documentId}/approvers')
    return { body: JSON.stringify({ name: 'X', phone: PHONE_A }) };
  if (path === '/approvers/{id}' || path === '/documents/{id}')
    return { body: JSON.stringify({ name: 'X', title: 'X' }) };
  return { body: JSON.stringify({}) };
}

const fill = (path: string, id: string, approverId: string) =>
  path
    .replace('{documentId}', id)
    .replace(/^\/documents\/\{id\}/, `/documents/${id}`)
    .replace(/^\/approvers\/\{id\}/, `/approvers/${approverId}`);

describe('multi-tenancy', () => {
  it('covers the document and approver routes', () => {
    const names = operations.map((o) => `${o.method} ${o.path}`);
    for (const expected of [
      'GET /documents/{id}',
      'PUT /documents/{id}',
      'DELETE /documents/{id}',
      'GET /documents/{documentId}/approvers',
      'POST /documents/{documentId}/approvers',
      'GET /approvers/{id}',
      'PUT /approvers/{id}',
      'DELETE /approvers/{id}',
    ])
      expect(names).toContain(expected);
  });

  it("another account's ids are 404 on every route, and nothing changes", async () => {
    for (const { method, path } of operations) {
      const res = await service.request(fill(path, doc.id, doc.approvers[0]!.id), {
        method,
        account: stranger,
        ...bodyFor(method, path),
      });
      const body = await expectError(res, 404);
      expect(body.error.message, `${method} ${path}`).toMatch(/^(Document|Approver) not found$/);
    }
    const multipart = await service.request(`/documents/${doc.id}`, {
      method: 'PUT',
      account: stranger,
      body: documentForm({ title: 'X' }, { file: await makePdf(1) }),
    });
    await expectError(multipart, 404, 'Document not found');
    const after = await service.request(`/documents/${doc.id}`, { account: owner });
    expect(((await after.json()) as { data: DocumentJson }).data).toEqual(doc);
    expect((await service.storedFiles()).length).toBe(1);
  });

  it.each(['not-a-uuid', '123', '00000000-0000-4000-8000-00000000000Z', '%20'])(
    'a malformed id (%s) is 404 on every route',
    async (bad) => {
      for (const { method, path } of operations) {
        const res = await service.request(fill(path, bad, bad), {
          method,
          account: owner,
          ...bodyFor(method, path),
        });
        await expectError(res, 404);
      }
    },
  );
});
