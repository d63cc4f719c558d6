import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import {
  eventually,
  linkTokenOf,
  messagesTo,
  pagePost,
  quickRepliesOf,
  send,
  startFlowHarness,
  statusOf,
  tapButton,
  TINY_PNG,
  type FlowHarness,
} from './approval-flow.ts';
import { documentForm, type FormValue } from './multipart.ts';
import { makePdf } from './pdf.ts';
import { type TestPki, createTestPki } from './pki.ts';
import { stampPng } from './sample-input.ts';

export const PUBLIC_BASE_URL = 'https://wathiq.example.test';
export const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts');
export const ORIGINAL_PAGES = 2;

export interface FinalPdfHarness extends FlowHarness {
  pki: TestPki;
  dataDir: string;
}

/**
 * The real service (real Temporal, PostgreSQL, fake Graph API) whose worker signs with a test CA's certificate
 * through SIGNING_P12_PATH / SIGNING_P12_PASSWORD, with its files in a fresh DATA_DIR.
 */
export async function startFinalPdfHarness(
  options: { env?: Record<string, string>; worker?: boolean } = {},
): Promise<FinalPdfHarness> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-final-pdf-'));
  const pki = await createTestPki(path.join(dataDir, 'pki'));
  const h = await startFlowHarness({
    ...(options.worker === false ? { worker: false } : {}),
    env: {
      DATA_DIR: dataDir,
      PUBLIC_BASE_URL,
      SIGNING_P12_PATH: pki.p12Path,
      SIGNING_P12_PASSWORD: pki.p12Password,
      ...options.env,
    },
  });
  return { ...h, pki, dataDir };
}

type Act =
  | { page: Record<string, unknown> } // POST /a/{token}/complete with this body
  | { button: true }; // the first quick reply (approve / review) on WhatsApp

export interface BilingualApprover {
  name_ar: string;
  name_en: string;
  role_ar: string;
  role_en: string;
  phone: string;
  action_type: 'sign' | 'stamp' | 'approve_only' | 'review_only';
  page?: number;
  x?: number;
  y?: number;
  width?: number;
  act: Act;
}

export const STAMP_PNG = `data:image/png;base64,${stampPng().toString('base64')}`;

/** All four action types, and both ways to sign and to stamp; Arabic names with lam-alef and joined forms. */
export function sixApprovers(options: { placeFirst?: boolean } = {}): BilingualApprover[] {
  return [
    {
      name_ar: 'سارة عبدالله المطيري',
      name_en: 'Sarah Al-Mutairi',
      role_ar: 'المديرة المالية',
      role_en: 'Chief Financial Officer',
      phone: '966501234567',
      action_type: 'sign',
      ...(options.placeFirst ? { page: 1, x: 380, y: 60 } : {}),
      act: { page: { signature_png: TINY_PNG } },
    },
    {
      name_ar: 'خالد إبراهيم الزهراني',
      name_en: 'Khalid Al-Zahrani',
      role_ar: 'المستشار القانوني',
      role_en: 'Legal Counsel',
      phone: '966551234568',
      action_type: 'sign',
      act: { page: { typed_name: 'Khalid Al-Zahrani' } },
    },
    {
      name_ar: 'نورة سعد القحطاني',
      name_en: 'Noura Al-Qahtani',
      role_ar: 'مديرة المشتريات',
      role_en: 'Procurement Manager',
      phone: '966561234569',
      action_type: 'stamp',
      act: { page: { stamp_png: STAMP_PNG } },
    },
    {
      name_ar: 'عمر سلامة الدوسري',
      name_en: 'Omar Al-Dosari',
      role_ar: 'أمين الختم',
      role_en: 'Seal Keeper',
      phone: '966531234570',
      action_type: 'stamp',
      act: { page: { generated_seal: true } },
    },
    {
      name_ar: 'لينا عبدالرحمن الشهري',
      name_en: 'Lina Al-Shehri',
      role_ar: 'مديرة العمليات',
      role_en: 'Operations Director',
      phone: '447911123456',
      action_type: 'approve_only',
      act: { button: true },
    },
    {
      name_ar: 'ريم خالد العنزي',
      name_en: 'Reem Al-Anazi',
      role_ar: 'مراجعة الجودة',
      role_en: 'Quality Reviewer',
      phone: '966541234571',
      action_type: 'review_only',
      act: { button: true },
    },
  ];
}

export interface CreatedDocument {
  id: string;
  reference: string;
  expires_at: string;
  approvers: { id: string; phone: string; order_index: number }[];
}

export async function createBilingualDocument(
  h: FlowHarness,
  workflowType: 'sequential' | 'parallel',
  approvers: readonly BilingualApprover[],
): Promise<CreatedDocument> {
  const form = documentForm(
    {
      title_ar: 'عقد توريد أجهزة الحاسب',
      title_en: 'Computer equipment supply contract',
      workflow_type: workflowType,
    },
    {
      approvers: approvers.map(({ act: _act, ...a }, i): Record<string, FormValue> => ({
        ...a,
        order: i + 1,
      })),
      file: await makePdf(ORIGINAL_PAGES, 'Contract'),
    },
  );
  const res = await h.service.request('/documents', { method: 'POST', account: h.account, body: form });
  const body = (await res.json()) as { data: CreatedDocument };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body.data;
}

/**
 * Sends the document and has every approver act, in `order` (indexes into `approvers`), each once their
 * notification has arrived. Waits for the document to be approved.
 */
export async function driveToApproval(
  h: FlowHarness,
  doc: CreatedDocument,
  approvers: readonly BilingualApprover[],
  order: readonly number[],
): Promise<void> {
  const before = new Map(approvers.map((a) => [a.phone, messagesTo(h, a.phone).length]));
  expect((await send(h, doc.id)).status).toBe(200);
  for (const i of order) {
    const a = approvers[i]!;
    const message = await eventually(() => messagesTo(h, a.phone)[before.get(a.phone)!]);
    const res =
      'page' in a.act
        ? await pagePost(h, linkTokenOf(message), 'complete', a.act.page)
        : await tapButton(h, { from: a.phone, payload: quickRepliesOf(message)[0]! });
    expect(res.status, `${a.name_en}: ${await res.text()}`).toBe(200);
  }
  await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 60_000);
}

/** A URL on PUBLIC_BASE_URL, fetched from the service under test (which does not listen on that host). */
export function fetchPublic(h: FlowHarness, url: string, init: RequestInit = {}): Promise<Response> {
  expect(url.startsWith(`${PUBLIC_BASE_URL}/`), url).toBe(true);
  return fetch(`${h.service.api.url}${url.slice(PUBLIC_BASE_URL.length)}`, init);
}

export interface DownloadBody {
  success: boolean;
  data: { download_url: string; expires_at: string; filename: string };
}

export async function download(h: FlowHarness, documentId: string): Promise<Response> {
  return h.service.request(`/documents/${documentId}/download`, { account: h.account });
}
