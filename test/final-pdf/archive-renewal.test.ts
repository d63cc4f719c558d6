import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  archiveRenewalScheduleId,
  ensureArchiveRenewalSchedule,
} from '../../src/features/approval/archive-renewal-schedule.ts';
import type { archiveRenewalWorkflow } from '../../src/features/approval/workflow/archive-renewal-workflow.ts';
import { pdfSignatures } from '../../src/pdf/ltv/pdf-signatures.ts';
import {
  type DownloadBody,
  type FinalPdfHarness,
  createBilingualDocument,
  download,
  driveToApproval,
  fetchPublic,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { exportHistory } from '../helpers/histories.ts';
import { type LtvPki, startLtvPki } from '../helpers/ltv-pki.ts';
import { dssValidate, dssValidatorJar } from '../helpers/validators.ts';

/**
 * Archive renewal (PAdES B-LTA): a file time-stamped by a TSA whose certificate expires within the margin gets a
 * fresh document time-stamp from the TSA's new certificate, served at the same permanent URL, and still passes DSS
 * offline. RECORD_HISTORIES=archive-renewal records the renewal run's history under test/histories/archive-renewal.
 */

const DAY = 24 * 3600_000;
const HISTORIES = path.resolve(import.meta.dirname, '../histories/archive-renewal');

let pki: LtvPki;
let pkiDir: string;
let h: FinalPdfHarness;

beforeAll(async () => {
  const jar = dssValidatorJar();
  pkiDir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-ltv-renewal-'));
  pki = await startLtvPki(pkiDir);
  // A short-lived time-stamping certificate: the file's archive time-stamp is due for renewal at once.
  await pki.renewTsaCertificate(new Date(Date.now() - DAY), new Date(Date.now() + 2 * DAY));
  h = await startFinalPdfHarness({
    env: { SIGNING_P12_PATH: pki.signerP12, SIGNING_P12_PASSWORD: pki.p12Password, TSA_URL: pki.tsaUrl },
  });
  await jar;
}, 600_000);

afterAll(async () => {
  await h?.close();
  await pki?.close();
  if (h) await rm(h.dataDir, { recursive: true, force: true });
  if (pkiDir) await rm(pkiDir, { recursive: true, force: true });
});

const archiveRow = async (documentId: string) =>
  h.service.database
    .db('archive_timestamps')
    .where({ document_id: documentId })
    .first<{ expires_at: Date; renewals: number } | undefined>('expires_at', 'renewals');

describe('archive renewal', () => {
  it(
    'adds a fresh document time-stamp before the old one’s certificate expires, at the same URL, still B-LTA offline',
    { timeout: 300_000 },
    async () => {
      const approvers = sixApprovers().filter((_, i) => i === 4); // approve_only, by button
      const doc = await createBilingualDocument(h, 'sequential', approvers);
      await driveToApproval(h, doc, approvers, [0]);
      const before = await archiveRow(doc.id);
      expect(before?.expires_at.getTime()).toBeLessThan(Date.now() + 3 * DAY);
      const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;
      const first = Buffer.from(await (await fetchPublic(h, data.download_url)).arrayBuffer());

      // The TSA's certificate is replaced by a long-lived one; the schedule's workflow renews what is due.
      await pki.renewTsaCertificate(new Date(Date.now() - DAY), new Date(Date.now() + 730 * DAY));
      const workflowId = `archive-renewal-test-${randomUUID()}`;
      const result = await h.service.temporal.client.workflow.execute<typeof archiveRenewalWorkflow>(
        'archiveRenewalWorkflow',
        {
          workflowId,
          taskQueue: h.service.config.temporal.taskQueue,
          args: [{ marginDays: 30, batchSize: 10 }],
        },
      );
      expect(result).toEqual({ renewed: 1, failed: 0 });
      if (process.env.RECORD_HISTORIES === 'archive-renewal') {
        await mkdir(HISTORIES, { recursive: true });
        await exportHistory(workflowId, path.join(HISTORIES, 'renewed.json'));
      }

      const after = await archiveRow(doc.id);
      expect(after?.renewals).toBe(1);
      expect(after!.expires_at.getTime()).toBeGreaterThan(Date.now() + 700 * DAY);
      // The same permanent URL now serves the renewed file: the first one followed by the new updates.
      const res = await fetchPublic(h, data.download_url);
      expect(res.status).toBe(200);
      const renewed = Buffer.from(await res.arrayBuffer());
      expect(renewed.length).toBeGreaterThan(first.length);
      expect(renewed.subarray(0, first.length).equals(first)).toBe(true);
      const stamps = (await pdfSignatures(renewed)).filter((s) => s.subFilter === 'ETSI.RFC3161');
      expect(stamps).toHaveLength(2);

      // Nothing is due any more: a second run renews nothing.
      const again = await h.service.temporal.client.workflow.execute<typeof archiveRenewalWorkflow>(
        'archiveRenewalWorkflow',
        {
          workflowId: `archive-renewal-test-${randomUUID()}`,
          taskQueue: h.service.config.temporal.taskQueue,
          args: [{ marginDays: 30, batchSize: 10 }],
        },
      );
      expect(again).toEqual({ renewed: 0, failed: 0 });

      const file = path.join(h.dataDir, 'renewed.pdf');
      await writeFile(file, renewed);
      const [dss] = await dssValidate(pki.rootPem, [{ path: file, offline: true }]);
      const sig = dss?.signatures[0];
      expect(sig, JSON.stringify(dss)).toMatchObject({
        indication: 'TOTAL_PASSED',
        format: 'PAdES-BASELINE-LTA',
      });
      // The signature time-stamp and both archive time-stamps.
      expect(sig!.timestamps.map((t) => t.indication)).toEqual(['PASSED', 'PASSED', 'PASSED']);
    },
  );

  it('the worker’s schedule is created once per task queue and updated, not duplicated, on the next start', async () => {
    const taskQueue = `archive-renewal-schedule-test-${randomUUID()}`;
    const client = h.service.temporal.client;
    const opts = { taskQueue, intervalHours: 24, marginDays: 30, batchSize: 100 };
    const id = await ensureArchiveRenewalSchedule(client, opts);
    expect(id).toBe(archiveRenewalScheduleId(taskQueue));
    await ensureArchiveRenewalSchedule(client, { ...opts, intervalHours: 12 });
    try {
      const described = await client.schedule.getHandle(id).describe();
      expect(described.spec.intervals?.map((i) => i.every)).toEqual([12 * 3600_000]);
      expect(described.action).toMatchObject({
        type: 'startWorkflow',
        workflowType: 'archiveRenewalWorkflow',
      });
      expect(described.policies.overlap).toBe('SKIP');
    } finally {
      await client.schedule.getHandle(id).delete();
    }
  });
});
