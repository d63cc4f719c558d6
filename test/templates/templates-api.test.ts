import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DocumentResource } from '../../src/features/documents/documents-schemas.ts';
import type { TestAccount } from '../helpers/test-service.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startDocumentsService, type DocumentsService } from '../documents/support.ts';
import { createTemplate, phoneFor, postTemplate, ROLES } from './support.ts';

let service: DocumentsService;
let account: TestAccount;

beforeAll(async () => {
  service = await startDocumentsService();
  account = await service.createAccount();
});
afterAll(() => service?.close());

const json = (body: unknown) => JSON.stringify(body);
const errorsOf = async (res: Response) =>
  ((await res.json()) as { error: { details: Record<string, string[]> } }).error.details;

describe('templates', () => {
  it('creates, reads, lists, versions and archives a template; documents keep their version', async () => {
    const template = await createTemplate(service, account);
    expect(template.version).toBe(1);
    expect(template.roles.map((r) => [r.key, r.order_index, r.action_type])).toEqual([
      ['employee', 1, 'sign'],
      ['hr', 2, 'approve_only'],
    ]);
    expect(template.page_count).toBe(2);

    const made = await service.request(`/templates/${template.id}/documents`, {
      method: 'POST',
      account,
      body: json({
        recipients: {
          employee: { name_ar: 'سارة', name_en: 'Sara', phone: `+${phoneFor(1)}` },
          hr: { name: 'Omar', phone: phoneFor(2), role_en: 'HR manager' },
        },
      }),
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const doc = DocumentResource.parse(((await made.json()) as { data: unknown }).data);
    expect(doc.status).toBe('draft');
    expect(doc.template).toEqual({ id: template.id, version: 1 });
    expect(doc.title_en).toBe('Employment contract amendment');
    expect(doc.file.sha256).toBe(template.file.sha256);
    expect(doc.approvers.map((a) => [a.name_en, a.phone, a.action_type, a.order_index])).toEqual([
      ['Sara', phoneFor(1), 'sign', 1],
      ['Omar', phoneFor(2), 'approve_only', 2],
    ]);

    const updated = await service.request(`/templates/${template.id}`, {
      method: 'PUT',
      account,
      body: json({ title_en: 'Amendment v2', workflow_type: 'parallel' }),
    });
    expect(updated.status, await updated.clone().text()).toBe(200);
    const v2 = ((await updated.json()) as { data: { version: number; title_en: string; title_ar: string } })
      .data;
    expect([v2.version, v2.title_en, v2.title_ar]).toEqual([2, 'Amendment v2', 'تعديل عقد العمل']);

    // The document made from version 1 still reads version 1.
    const again = await service.request(`/documents/${doc.id}`, { account });
    expect(((await again.json()) as { data: { template: unknown; title_en: string } }).data).toMatchObject({
      template: { id: template.id, version: 1 },
      title_en: 'Employment contract amendment',
    });

    const list = await service.request('/templates', { account });
    const listed = (await list.json()) as {
      data: { id: string; version: number }[];
      meta: { total: number };
    };
    expect(listed.data.find((t) => t.id === template.id)?.version).toBe(2);

    const archived = await service.request(`/templates/${template.id}/archive`, { method: 'POST', account });
    expect(archived.status).toBe(200);
    const refused = await service.request(`/templates/${template.id}/documents`, {
      method: 'POST',
      account,
      body: json({ recipients: {} }),
    });
    expect(refused.status).toBe(409);
    const active = (await (await service.request('/templates', { account })).json()) as {
      data: { id: string }[];
    };
    expect(active.data.map((t) => t.id)).not.toContain(template.id);
    const old = (await (await service.request('/templates?archived=true', { account })).json()) as {
      data: { id: string }[];
    };
    expect(old.data.map((t) => t.id)).toContain(template.id);
    // Deleting a draft made from a template leaves the template's file alone.
    const deleted = await service.request(`/documents/${doc.id}`, { method: 'DELETE', account });
    expect(deleted.status).toBe(200);
    expect(
      (await service.storedFiles()).some((f) =>
        f.startsWith(`templates/${account.accountId}/${template.id}/`),
      ),
    ).toBe(true);
  });

  it('names missing and unknown roles, and prototype keys, in a 422', async () => {
    const template = await createTemplate(service, account);
    const res = await service.request(`/templates/${template.id}/documents`, {
      method: 'POST',
      account,
      body: `{"recipients":{"employee":{"name":"Sara","phone":"12"},"constructor":{"name":"X","phone":"${phoneFor(3)}"},"toString":{}}}`,
    });
    expect(res.status).toBe(422);
    const details = await errorsOf(res);
    expect(Object.keys(details).sort()).toEqual(
      ['recipients.constructor', 'recipients.employee.phone', 'recipients.hr', 'recipients.toString'].sort(),
    );
    expect(details['recipients.hr']![0]).toMatch(/hr.*required/);
  });

  it('refuses bad roles: keys, reserved names, duplicates, placement beyond the PDF, no roles', async () => {
    const templateFiles = async () => (await service.storedFiles()).filter((f) => f.startsWith('templates/'));
    const before = await templateFiles();
    const cases: [unknown, string][] = [
      [[{ key: '__proto__', label_ar: 'أ', label_en: 'A' }], 'roles.0.key'],
      [[{ key: 'constructor', label_ar: 'أ', label_en: 'A' }], 'roles.0.key'],
      [[{ key: 'Employee', label_ar: 'أ', label_en: 'A' }], 'roles.0.key'],
      [[{ key: 'a'.repeat(33), label_ar: 'أ', label_en: 'A' }], 'roles.0.key'],
      [[ROLES[0], ROLES[0]], 'roles.1.key'],
      [[{ ...ROLES[0], placement: { page: 3, x: 10, y: 10 } }], 'roles.0.placement.page'],
      [[{ ...ROLES[0], label_en: 'line\nbreak' }], 'roles.0.label_en'],
      [[], 'roles'],
      ['not json', 'roles'],
    ];
    for (const [roles, field] of cases) {
      const res = await postTemplate(service, account, undefined, { roles });
      expect(res.status, JSON.stringify(roles)).toBe(422);
      expect(Object.keys(await errorsOf(res)), JSON.stringify(roles)).toContain(field);
    }
    const noFile = await postTemplate(service, account, undefined, { file: null });
    expect(Object.keys(await errorsOf(noFile))).toContain('file');
    const notPdf = await postTemplate(service, account, undefined, { file: Buffer.from('hello') });
    expect(Object.keys(await errorsOf(notPdf))).toContain('file');
    const parts = await postTemplate(service, account, undefined, { extra: [['roles[0][key]', 'x']] });
    expect(Object.keys(await errorsOf(parts))).toContain('roles[0][key]');
    // No refusal left a file behind.
    expect(await templateFiles()).toEqual(before);
  });

  it('sends a document made from a template with send: true', async () => {
    const template = await createTemplate(service, account, { file: await makePdf(1) });
    const res = await service.request(`/templates/${template.id}/documents`, {
      method: 'POST',
      account,
      body: json({
        title: 'Amendment for Sara',
        send: true,
        recipients: {
          employee: { name: 'Sara', phone: phoneFor(4) },
          hr: { name: 'Omar', phone: phoneFor(5) },
        },
      }),
    });
    // This service has no worker: the workflow starts, and the answer does not wait past its time-out for it.
    expect(res.status, await res.clone().text()).toBe(201);
    const doc = ((await res.json()) as { data: { status: string; title_en: string } }).data;
    expect(doc).toMatchObject({ status: 'pending', title_en: 'Amendment for Sara' });
  });
});
