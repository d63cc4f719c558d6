import { expect } from 'vitest';
import type { TestAccount, TestService } from '../helpers/test-service.ts';
import { phoneFor } from '../templates/support.ts';

export interface BulkSendJson {
  id: string;
  status: string;
  counts: Record<string, number>;
  resumes_at: string | null;
  invalid_rows?: { row: number; errors: Record<string, string[]> }[];
}

/** `n` rows for the two-role template of test/templates/support.ts, each with numbers of its own. */
export function rowsFor(n: number, base = 0) {
  return Array.from({ length: n }, (_, i) => ({
    employee: { name: `Employee ${i + 1}`, phone: phoneFor(2 * i, base) },
    hr: { name_ar: 'الموارد البشرية', name_en: 'HR', phone: phoneFor(2 * i + 1, base) },
  }));
}

/** The same rows as a CSV file. */
export function csvFor(n: number, base = 0, eol = '\n'): string {
  const lines = ['employee.name,employee.phone,hr.name_ar,hr.name_en,hr.phone'];
  rowsFor(n, base).forEach((r) =>
    lines.push([r.employee.name, r.employee.phone, r.hr.name_ar, r.hr.name_en, r.hr.phone].join(',')),
  );
  return lines.join(eol) + eol;
}

export function postCsv(
  service: TestService,
  account: TestAccount,
  templateId: string,
  csv: string | Uint8Array,
  fields: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'rows.csv');
  return service.request(`/templates/${templateId}/bulk-sends`, { method: 'POST', account, body: form });
}

export async function postRows(
  service: TestService,
  account: TestAccount,
  templateId: string,
  body: unknown,
): Promise<Response> {
  return service.request(`/templates/${templateId}/bulk-sends`, {
    method: 'POST',
    account,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function created(res: Response): Promise<BulkSendJson> {
  expect(res.status, await res.clone().text()).toBe(201);
  return ((await res.json()) as { data: BulkSendJson }).data;
}

export async function detailsOf(res: Response, status = 422): Promise<Record<string, string[]>> {
  expect(res.status, await res.clone().text()).toBe(status);
  return ((await res.json()) as { error: { details: Record<string, string[]> } }).error.details;
}
