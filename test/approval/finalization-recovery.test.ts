import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  linkTokenOf,
  localActivities,
  messagesTo,
  pagePost,
  send,
  statusOf,
} from '../helpers/approval-flow.ts';
import {
  type BilingualApprover,
  type CreatedDocument,
  createBilingualDocument,
  download,
  type DownloadBody,
  fetchPublic,
  type FinalPdfHarness,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { pdfsig } from '../helpers/pdf-tools.ts';
import { retryFinalizationCli } from '../helpers/retry-cli.ts';

/**
 * A finalization that fails for good leaves the document in_progress with
 * finalization.state "failed", an event, and a way out (void, or the operator's documents:retry-finalization).
 * The failure is real: the worker's signing certificate (SIGNING_P12_PATH) is moved away, which is retryable,
 * until APPROVAL_FINALIZE_RETRY_SECONDS (10 s here: a finalization's one window, long enough for a permanent
 * failure to be reported as itself on a loaded machine) runs out. The first attempt is a local activity; the ones after
 * it are the ordinary activity, heartbeating on APPROVAL_FINALIZE_HEARTBEAT_SECONDS.
 */
const HEARTBEAT_SECONDS = 7;
let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness({
    env: {
      APPROVAL_FINALIZE_RETRY_SECONDS: '10',
      APPROVAL_FINALIZE_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
    },
  });
});
afterAll(async () => {
  await h.close();
  await rm(h.dataDir, { recursive: true, force: true });
});

const db = () => h.service.database.db;
const typedSigner = (): BilingualApprover[] => sixApprovers().filter((_, i) => i === 1); // a typed signature

interface DocumentBody {
  data: {
    status: string;
    finalization: { state: string; error: string | null; failed_at: string | null } | null;
  };
}
const getDocument = async (id: string) =>
  (await (await h.service.request(`/documents/${id}`, { account: h.account })).json()) as DocumentBody;
const eventsOf = async (documentId: string) =>
  (await db()('document_events').where({ document_id: documentId }).orderBy('id')).map(
    (e: { event: string }) => e.event,
  );

/** Sends the document and has its one approver sign on the page. */
async function complete(doc: CreatedDocument, approvers: BilingualApprover[]): Promise<void> {
  const phone = approvers[0]!.phone;
  const before = messagesTo(h, phone).length;
  expect((await send(h, doc.id)).status).toBe(200);
  const message = await eventually(() => messagesTo(h, phone)[before]);
  const act = approvers[0]!.act;
  expect('page' in act).toBe(true);
  const res = await pagePost(h, linkTokenOf(message), 'complete', 'page' in act ? act.page : {});
  expect(res.status).toBe(200);
}

const cli = (arg: string) => retryFinalizationCli(h.service, arg);

describe('a finalization that fails for good', () => {
  it('leaves the document in_progress and failed, visible and evented, until the operator retries it', async () => {
    const hidden = `${h.pki.p12Path}.away`;
    await rename(h.pki.p12Path, hidden); // the operator's certificate is gone: SignerConfigError, retryable
    const approvers = typedSigner();
    const doc = await createBilingualDocument(h, 'parallel', approvers);
    const other = await createBilingualDocument(h, 'parallel', approvers);
    try {
      await complete(doc, approvers);
      const failed = await eventually(async () => {
        const d = (await getDocument(doc.id)).data;
        return d.finalization?.state === 'failed' && d;
      }, 90_000);
      expect(failed.status).toBe('in_progress');
      expect(failed.finalization!.error).toMatch(/SIGNING_P12_PATH .* cannot be read/);
      expect(Date.parse(failed.finalization!.failed_at!)).not.toBeNaN();
      const status = await statusOf(h, doc.id);
      expect(status.status).toBe('in_progress');
      expect((status as unknown as DocumentBody['data']).finalization).toMatchObject({ state: 'failed' });
      expect(await eventsOf(doc.id)).toContain('document.finalization_failed');
      // The local attempt failed, then the ordinary activity took over, with the configured heartbeat time-out.
      expect(
        (await localActivities(h, doc.id)).filter((a) => a.name === 'finalizeAndSendSignedCopies'),
      ).toEqual([{ name: 'finalizeAndSendSignedCopies', failed: true }]);
      const history = await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).fetchHistory();
      const finalizing = (history.events ?? []).flatMap((e) => {
        const scheduled = e.activityTaskScheduledEventAttributes;
        return scheduled?.activityType?.name === 'finalizeAndSendSignedCopies' ? [scheduled] : [];
      });
      expect(finalizing).toHaveLength(1);
      // int64 fields arrive as Long objects, whose decimal form Number reads.
      expect(Number(String(finalizing[0]!.heartbeatTimeout?.seconds))).toBe(HEARTBEAT_SECONDS);

      // A document whose finalization has not failed is refused, with a message naming why.
      const refused = await cli(other.reference);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/draft; only a document whose finalization failed/);

      await rename(hidden, h.pki.p12Path); // fixed
      const retried = await cli(doc.reference);
      expect(retried.code, retried.stderr).toBe(0);
      expect(JSON.parse(retried.stdout)).toMatchObject({ id: doc.id, finalization: { state: 'failed' } });

      await eventually(async () => (await statusOf(h, doc.id)).status === 'approved', 90_000);
      expect((await getDocument(doc.id)).data.finalization).toMatchObject({
        state: 'succeeded',
        error: null,
      });
      const events = await eventsOf(doc.id);
      expect(events.slice(-2)).toEqual(['document.finalization_failed', 'document.approved']);

      // The signed file is there and valid.
      const dl = (await (await download(h, doc.id)).json()) as DownloadBody;
      const pdf = Buffer.from(await (await fetchPublic(h, dl.data.download_url)).arrayBuffer());
      const file = path.join(h.dataDir, `${doc.reference}.pdf`);
      await writeFile(file, pdf);
      expect(pdfsig(file).signatures.map((s) => s.valid)).toEqual([true]);

      // Nothing left to retry.
      const again = await cli(doc.id);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/approved; only a document whose finalization failed/);
    } finally {
      await rename(hidden, h.pki.p12Path).catch(() => undefined);
    }
  }, 240_000);

  it('a permanent cause parks it after the local attempt alone; it can still be voided, and the retry is then refused', async () => {
    // Another real failure, a permanent one that fails at once: the stored original no longer matches its SHA-256.
    const approvers = typedSigner();
    const doc = await createBilingualDocument(h, 'parallel', approvers);
    const { file_key } = await db()('documents')
      .where({ id: doc.id })
      .first<{ file_key: string }>('file_key');
    await h.service.deps.storage.put(file_key, Readable.from([Buffer.from('%PDF-1.7\nnot the upload\n')]));
    await complete(doc, approvers);
    const failed = await eventually(async () => {
      const d = (await getDocument(doc.id)).data;
      return d.finalization?.state === 'failed' && d;
    }, 90_000);
    expect(failed.finalization!.error).toMatch(/SHA-256/);
    // Failed for good in the local attempt: the run parked at once, with no ordinary attempt to fail again (and
    // count again in wathiq_finalization_failures_total). The park's own write (markFinalizationFailed, a local
    // activity in the same workflow task) can be read before that task completes and records the markers, so the
    // history is read once they are in it.
    const finalizing = await eventually(async () => {
      const markers = (await localActivities(h, doc.id)).filter(
        (a) => a.name === 'finalizeAndSendSignedCopies',
      );
      return markers.length > 0 && markers;
    }, 30_000);
    expect(finalizing).toEqual([{ name: 'finalizeAndSendSignedCopies', failed: true }]);
    const history = await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).fetchHistory();
    const scheduled = (history.events ?? []).flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(scheduled).not.toContain('finalizeAndSendSignedCopies');

    const res = await h.service.request(`/documents/${doc.id}/void`, { method: 'POST', account: h.account });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as DocumentBody).data.status).toBe('voided');
    expect(await eventsOf(doc.id)).toEqual(
      expect.arrayContaining(['document.finalization_failed', 'document.voided']),
    );
    const refused = await cli(doc.id);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/voided/);
    await h.service.temporal.client.workflow.getHandle(`document-${doc.id}`).result();
  }, 240_000);
});
