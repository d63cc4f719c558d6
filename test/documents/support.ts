import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { z } from 'zod';
import { ApproverResource } from '../../src/features/documents/approvers-schemas.ts';
import { DocumentResource } from '../../src/features/documents/documents-schemas.ts';
import { ErrorEnvelope, PageMeta } from '../../src/api/schemas/envelopes.ts';
import { documentForm, type FormValue } from '../helpers/multipart.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startTestService, type TestAccount, type TestService } from '../helpers/test-service.ts';

export type DocumentJson = z.output<typeof DocumentResource>;
export type ApproverJson = z.output<typeof ApproverResource>;
export type ErrorJson = z.output<typeof ErrorEnvelope>;

export interface DocumentsService extends TestService {
  dataDir: string;
  /** Every file under the local storage root (excluding the temp folder). */
  storedFiles(): Promise<string[]>;
}

/** The real service with its files in a scratch folder of its own. */
export async function startDocumentsService(env: Record<string, string> = {}): Promise<DocumentsService> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-docs-'));
  const service = await startTestService({ worker: false, env: { DATA_DIR: dataDir, ...env } });
  const close = service.close.bind(service);
  return Object.assign(service, {
    dataDir,
    async storedFiles() {
      const root = path.join(dataDir, 'files');
      const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
      return entries
        .filter((e) => e.isFile())
        .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
        .filter((p) => !p.startsWith('.tmp'));
    },
    async close() {
      await close();
      await rm(dataDir, { recursive: true, force: true });
    },
  });
}

export const PHONE_A = '966501234567';
export const PHONE_B = '966551234567';

export async function postDocument(
  service: TestService,
  account: TestAccount,
  fields: Record<string, FormValue> = { title: 'Contract' },
  options: {
    approvers?: Record<string, FormValue>[];
    file?: Uint8Array | null;
    filename?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const file = options.file === null ? undefined : (options.file ?? (await makePdf(2)));
  return service.request('/documents', {
    method: 'POST',
    account,
    headers: options.headers,
    body: documentForm(fields, { approvers: options.approvers, file, filename: options.filename }),
  });
}

/** Creates a draft and returns it, checked against the documented schema. */
export async function createDraft(
  service: TestService,
  account: TestAccount,
  fields: Record<string, FormValue> = { title: 'Contract' },
  approvers: Record<string, FormValue>[] = [{ name: 'Ali', phone: PHONE_A }],
): Promise<DocumentJson> {
  const res = await postDocument(service, account, fields, { approvers });
  expect(res.status, await res.clone().text()).toBe(201);
  return documentOf(await res.json());
}

export function documentOf(body: unknown): DocumentJson {
  const parsed = (body as { success: boolean; data: unknown }).data;
  expect((body as { success: boolean }).success).toBe(true);
  return DocumentResource.parse(parsed);
}

export function approverOf(body: unknown): ApproverJson {
  expect((body as { success: boolean }).success).toBe(true);
  return ApproverResource.parse((body as { data: unknown }).data);
}

export function pageOf(body: unknown): { data: unknown[]; meta: z.output<typeof PageMeta> } {
  const b = body as { success: boolean; data: unknown[]; meta: unknown };
  expect(b.success).toBe(true);
  return { data: b.data, meta: PageMeta.parse(b.meta) };
}

/** Asserts a 422 of this type (a field's validation unless told) with exactly these details. */
export async function expectValidation(
  res: Response,
  details: Record<string, string[]>,
  type: 'validation_failed' | 'idempotency_key_reused' = 'validation_failed',
): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(422);
  const body = ErrorEnvelope.parse(JSON.parse(text));
  expect(body.error).toEqual({ code: 422, type, message: 'Validation failed', details });
}

export async function expectError(
  res: Response,
  status: number,
  message?: string | RegExp,
): Promise<ErrorJson> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = ErrorEnvelope.parse(JSON.parse(text));
  expect(body.error.code).toBe(status);
  if (typeof message === 'string') expect(body.error.message).toBe(message);
  else if (message) expect(body.error.message).toMatch(message);
  return body;
}

export function json(body: unknown): { body: string; headers: Record<string, string> } {
  return { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
}
