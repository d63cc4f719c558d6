import { expect } from 'vitest';
import type { z } from 'zod';
import { TemplateResource } from '../../src/features/templates/schemas.ts';
import { makePdf } from '../helpers/pdf.ts';
import type { TestAccount, TestService } from '../helpers/test-service.ts';

export type TemplateJson = z.output<typeof TemplateResource>;

/** Two roles: an employee who signs first, then HR who approves. */
export const ROLES = [
  { key: 'employee', label_ar: 'الموظف', label_en: 'Employee', action_type: 'sign' },
  { key: 'hr', label_ar: 'الموارد البشرية', label_en: 'HR', action_type: 'approve_only' },
];

/** POST /templates as multipart: the fields, roles as one JSON part, and the PDF. */
export async function postTemplate(
  service: TestService,
  account: TestAccount,
  fields: Record<string, string> = { title_ar: 'تعديل عقد العمل', title_en: 'Employment contract amendment' },
  options: { roles?: unknown; file?: Uint8Array | null; extra?: [string, string][] } = {},
): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (options.roles !== null)
    form.append(
      'roles',
      typeof options.roles === 'string' ? options.roles : JSON.stringify(options.roles ?? ROLES),
    );
  for (const [name, value] of options.extra ?? []) form.append(name, value);
  const file = options.file === null ? undefined : (options.file ?? (await makePdf(2)));
  if (file) form.append('file', new Blob([file], { type: 'application/pdf' }), 'amendment.pdf');
  return service.request('/templates', { method: 'POST', account, body: form });
}

export async function createTemplate(
  service: TestService,
  account: TestAccount,
  options: Parameters<typeof postTemplate>[3] & { fields?: Record<string, string> } = {},
): Promise<TemplateJson> {
  const res = await postTemplate(service, account, options.fields, options);
  expect(res.status, await res.clone().text()).toBe(201);
  const body = (await res.json()) as { data: unknown };
  return TemplateResource.parse(body.data);
}

/** A Saudi mobile number of its own for row `n` (valid for libphonenumber). */
export const phoneFor = (n: number, base = 0) => `9665${String(10_000_000 + base + n).slice(-8)}`;
