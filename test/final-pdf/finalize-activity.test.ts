import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createWorkerMetrics, type FinalizationMetrics } from '../../src/metrics/metrics.ts';
import { parseSamples, sumOf } from '../helpers/prometheus.ts';
import { createFinalizer, type FinalizedDocument, signerOnce } from '../../src/features/approval/finalize.ts';
import { createActivities } from '../../src/activities/index.ts';
import { createWorkerDeps } from '../../src/runtime/worker-deps.ts';
import { createDb } from '../../src/db/knex.ts';
import { sha256Hex } from '../../src/auth/tokens.ts';
import { documentEventsStore, fullEventData } from '../../src/features/events/document-events-store.ts';
import { DEFAULT_PDF_LIMITS, type PdfLimits } from '../../src/pdf/limits.ts';
import { SOON_ROUNDS } from '../../src/pdf/workers/fair-slots.ts';
import { createPdfFinalizer } from '../../src/pdf/workers/pdf-workers.ts';
import { objectStreamBomb } from '../helpers/pdf-bombs.ts';
import { pageText, pdfsig, qpdfCheck } from '../helpers/pdf-tools.ts';
import { type TestTsa, startTestTsa } from '../helpers/tsa-server.ts';
import {
  type BilingualApprover,
  type CreatedDocument,
  createBilingualDocument,
  download,
  type DownloadBody,
  driveToApproval,
  fetchPublic,
  type FinalPdfHarness,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';

let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness();
});
afterAll(async () => {
  await h.close();
  await rm(h.dataDir, { recursive: true, force: true });
});

const db = () => h.service.database.db;

interface FinalColumns {
  status: string;
  final_token_sha256: string | null;
  final_token_sealed: string | null;
  final_file_key: string | null;
  final_sha256: string | null;
  file_key: string;
}
const finalColumns = (id: string) =>
  db()('documents')
    .where({ id })
    .first<FinalColumns>(
      'status',
      'final_token_sha256',
      'final_token_sealed',
      'final_file_key',
      'final_sha256',
      'file_key',
    );

/** Files named final-* in the document's storage folder. */
async function finalFiles(documentId: string): Promise<string[]> {
  const dir = path.join(h.dataDir, 'files', 'documents', h.account.accountId, documentId);
  return (await readdir(dir)).filter((f) => f.startsWith('final-'));
}

const finalizer = (
  options: {
    tsaUrl?: string;
    production?: boolean;
    p12?: boolean;
    pdf?: PdfLimits;
    metrics?: FinalizationMetrics;
  } = {},
) =>
  createFinalizer({
    db: db(),
    storage: h.service.deps.storage,
    logger: h.service.logger,
    secrets: h.service.deps.secrets,
    signer: signerOnce({
      ...(options.p12 === false ? {} : { p12Path: h.pki.p12Path, p12Password: h.pki.p12Password }),
      devCertDir: path.join(h.dataDir, 'signing'),
      production: options.production ?? false,
    }),
    publicBaseUrl: h.service.config.http.publicBaseUrl,
    ...(options.tsaUrl ? { tsaUrl: options.tsaUrl } : {}),
    ...(options.pdf ? { pdf: options.pdf } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });

/** Finalization's metrics on a registry of the test's own. */
function finalizationMetrics() {
  const registry = new Registry();
  const metrics = createWorkerMetrics(registry, { templates: [] }).finalization;
  return { metrics, samples: async () => parseSamples(await registry.metrics()) };
}

/** The worker's own activities, run as Temporal runs them (with an activity context and a client). */
function runActivity(documentId: string): Promise<void> {
  const activities = createActivities(createWorkerDeps(h.service.config, db(), h.service.logger));
  const env = new MockActivityEnvironment(undefined, { client: h.service.temporal.client });
  return env.run((input: { documentId: string }) => activities.finalizeApprovedDocument(input), {
    documentId,
  });
}

/**
 * A document whose approvers have all completed (written straight to the read model, as the workflow's
 * activities would), not yet finalized: no workflow is running for it.
 */
async function completedDocument(approvers: BilingualApprover[]): Promise<CreatedDocument> {
  const doc = await createBilingualDocument(h, 'parallel', approvers);
  const at = new Date('2026-03-01T08:00:00Z');
  await db()('documents').where({ id: doc.id }).update({ status: 'in_progress', sent_at: at });
  for (const [i, a] of doc.approvers.entries()) {
    const spec = approvers[i]!;
    await db()('approvers')
      .where({ id: a.id })
      .update({
        status: 'completed',
        acted_at: new Date(at.getTime() + (i + 1) * 60_000),
        action_channel: 'page',
        action_ip: '203.0.113.7',
        action_user_agent: 'WathiqTest/1.0',
        typed_name: spec.action_type === 'sign' ? spec.name_en : null,
        generated_seal: spec.action_type === 'stamp',
      });
  }
  return doc;
}

const three = () => sixApprovers().filter((_, i) => [1, 3, 4].includes(i)); // typed sign, seal, approve_only

async function expectPermanent(run: Promise<unknown>, type: string): Promise<ApplicationFailure> {
  const err = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApplicationFailure);
  expect(err).toMatchObject({ type, nonRetryable: true });
  return err as ApplicationFailure;
}

describe('GET /documents/{id}/download', () => {
  it(
    'is 409 naming the status until the document is approved, then the URL',
    { timeout: 90_000 },
    async () => {
      const approvers = sixApprovers().filter((_, i) => i === 1 || i === 4); // typed sign, then approve_only
      const doc = await createBilingualDocument(h, 'sequential', approvers);
      const refused = await download(h, doc.id);
      expect(refused.status).toBe(409);
      expect(await refused.json()).toMatchObject({
        success: false,
        error: { code: 409, message: expect.stringMatching(/^Document is draft; /) as unknown },
      });
      await driveToApproval(h, doc, approvers, [0, 1]);
      const res = await download(h, doc.id);
      expect(res.status).toBe(200);
      const body = (await res.json()) as DownloadBody;
      expect(body.success).toBe(true);
      expect(Object.keys(body.data).sort()).toEqual(['download_url', 'expires_at', 'filename', 'signature']);
    },
  );

  it('is 409 while pending and in progress', async () => {
    const doc = await createBilingualDocument(h, 'sequential', three());
    await db()('documents').where({ id: doc.id }).update({ status: 'pending' });
    expect(
      ((await (await download(h, doc.id)).json()) as { error: { message: string } }).error.message,
    ).toMatch(/^Document is pending; only an approved document can be downloaded/);
    await db()('documents').where({ id: doc.id }).update({ status: 'in_progress' });
    const res = await download(h, doc.id);
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/in_progress/);
  });

  it("is 404 for another account's document and for an unknown id, 403 without documents:read", async () => {
    const doc = await completedDocument(three());
    await runActivity(doc.id);
    const other = await h.service.createAccount();
    const foreign = await h.service.request(`/documents/${doc.id}/download`, { account: other });
    expect(foreign.status).toBe(404);
    const unknown = await h.service.request(`/documents/${crypto.randomUUID()}/download`, {
      account: h.account,
    });
    expect(unknown.status).toBe(404);
    const writer = await h.service.createAccount({ scopes: ['documents:write'] });
    const res = await h.service.request(`/documents/${doc.id}/download`, { account: writer });
    expect(res.status).toBe(403);
  });
});

describe('the public file URL', () => {
  it('is 404 for an unknown token, a file name that is not the document’s, and a file not yet finished', async () => {
    const doc = await completedDocument(three());
    await runActivity(doc.id);
    const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;
    const base = data.download_url.slice(0, data.download_url.lastIndexOf('/'));
    for (const url of [
      `${base}/WQT-2000-000001.pdf`,
      `${base}/${doc.reference}.PDF`,
      data.download_url.replace(/files\/[^/]+\//, `files/${'A'.repeat(43)}/`),
      data.download_url.replace(/files\/[^/]+\//, 'files/short/'),
    ]) {
      const res = await fetchPublic(h, url);
      expect(res.status, url).toBe(404);
      expect(await res.json()).toMatchObject({ success: false, error: { code: 404 } });
      expect((await fetchPublic(h, url, { method: 'HEAD' })).status).toBe(404);
    }
    // Reserved but not finished (a crash before the hash was recorded): not served.
    await db()('documents').where({ id: doc.id }).update({ final_sha256: null });
    expect((await fetchPublic(h, data.download_url)).status).toBe(404);
  });
});

describe('finalization is idempotent', () => {
  it('run twice on an approved document: one file, one token, the same URL, one approved event', async () => {
    const approvers = sixApprovers().filter((_, i) => i === 0 || i === 2 || i === 5);
    const doc = await createBilingualDocument(h, 'parallel', approvers);
    await driveToApproval(h, doc, approvers, [0, 1, 2]);
    const before = await finalColumns(doc.id);
    const { data } = (await (await download(h, doc.id)).json()) as DownloadBody;

    await runActivity(doc.id);
    await runActivity(doc.id);

    expect(await finalColumns(doc.id)).toEqual(before);
    expect(await finalFiles(doc.id)).toHaveLength(1);
    expect(((await (await download(h, doc.id)).json()) as DownloadBody).data).toEqual(data);
    const approved = await db()('document_events').where({ document_id: doc.id, event: 'document.approved' });
    expect(approved).toHaveLength(1);
  });

  it('a retry after a crash (before or after the file was written) gives the same file under the same URL', async () => {
    const doc = await completedDocument(three());
    const finalize = finalizer();
    const first = await finalize(doc.id);
    const done = await finalColumns(doc.id);
    // Kept as a digest (looked up by it) and a sealed copy; never as the token.
    expect(done.final_token_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(done.final_token_sealed).toMatch(/^wqs1\./);
    expect(done.final_sha256).toMatch(/^[0-9a-f]{64}$/);
    const file = path.join(h.dataDir, 'files', done.final_file_key!);

    // Crashed after the file was written, before its hash was recorded.
    await db()('documents').where({ id: doc.id }).update({ final_sha256: null });
    const second = await finalize(doc.id);
    // Crashed before the file was written.
    await db()('documents').where({ id: doc.id }).update({ final_sha256: null });
    await rm(file);
    const third = await finalize(doc.id);

    expect(second).toEqual(first);
    expect(third).toEqual(first);
    expect(await finalColumns(doc.id)).toEqual(done); // same token, key and (deterministic) hash
    expect(await finalFiles(doc.id)).toEqual([path.basename(file)]);

    // The activity then approves the document; its event carries the URL finalization handed back.
    // The URLs are kept sealed beside the event (they work as credentials), and put back for delivery.
    await runActivity(doc.id);
    const stored = await db()('document_events')
      .where({ document_id: doc.id, event: 'document.approved' })
      .first<{ data: { document: Record<string, unknown> }; bearer_sealed: string | null }>();
    expect(stored.data.document).not.toHaveProperty('download_url');
    expect(stored.data.document).not.toHaveProperty('verification_url');
    expect(stored.bearer_sealed).toMatch(/^wqs1\./);
    const event = (await documentEventsStore(db()).findByDedupeKey(`document.approved:${doc.id}`))!;
    const data = fullEventData(event, h.service.deps.secrets) as {
      document: { download_url: string; filename: string; completed_at: string };
    };
    expect(data.document).toMatchObject(first.document);
    expect(data.document.completed_at).toBe(first.completedAt.toISOString().replace('.000Z', '+00:00'));
  });

  it('two runs at once reserve one token and write one file', async () => {
    const doc = await completedDocument(three());
    const { metrics, samples } = finalizationMetrics();
    const results: FinalizedDocument[] = await Promise.all([finalizer()(doc.id), finalizer()(doc.id)]);
    // A run that finds the file done is not a finalization: the duration histogram counts none.
    await finalizer({ metrics })(doc.id);
    expect(sumOf(await samples(), 'wathiq_finalization_duration_seconds_count')).toBe(0);
    expect(results[0]).toEqual(results[1]);
    expect(await finalFiles(doc.id)).toHaveLength(1);
    const row = await finalColumns(doc.id);
    const urlToken = /\/files\/([^/]+)\//.exec(results[0]!.document.download_url)![1]!;
    expect(sha256Hex(urlToken)).toBe(row.final_token_sha256);
    await runActivity(doc.id); // the file is served once the document is approved
    const res = await fetchPublic(h, results[0]!.document.download_url);
    expect(sha256Hex(Buffer.from(await res.arrayBuffer()))).toBe(row.final_sha256);
  });
});

describe('finalization failures', () => {
  it('a stored original that no longer matches its recorded SHA-256 is permanent (FinalizeError)', async () => {
    const doc = await completedDocument(three());
    const { file_key } = await finalColumns(doc.id);
    await h.service.deps.storage.put(file_key, Readable.from([Buffer.from('%PDF-1.7\nnot the upload\n')]));
    const { metrics, samples } = finalizationMetrics();
    const failure = await expectPermanent(finalizer({ metrics })(doc.id), 'FinalizeError');
    expect(failure.message).toMatch(/SHA-256/);
    expect((await finalColumns(doc.id)).final_sha256).toBeNull();
    const counted = (await samples()).filter((s) => s.name === 'wathiq_finalization_failures_total');
    expect(counted).toEqual([
      {
        name: 'wathiq_finalization_failures_total',
        labels: { reason: 'FinalizeError', retryable: 'false' },
        value: 1,
      },
    ]);
    expect(sumOf(await samples(), 'wathiq_finalization_duration_seconds_count')).toBe(0);
  });

  it('an original past the decoding limits is permanent (FinalizeError), with the reason upload gives', async () => {
    const doc = await completedDocument(three());
    const { file_key } = await finalColumns(doc.id);
    const bomb = objectStreamBomb();
    await h.service.deps.storage.put(file_key, Readable.from([bomb]));
    await db()('documents')
      .where({ id: doc.id })
      .update({ file_sha256: sha256Hex(bomb) });
    const failure = await expectPermanent(finalizer()(doc.id), 'FinalizeError');
    expect(failure.message).toMatch(/^The PDF expands to more than .+ when decompressed/);
    expect((await finalColumns(doc.id)).final_sha256).toBeNull();
  });

  it('an original that outlasts the time limit of its worker thread is permanent (PdfTooComplexError)', async () => {
    const doc = await completedDocument(three());
    const pdf: PdfLimits = {
      ...DEFAULT_PDF_LIMITS,
      finalization: { ...DEFAULT_PDF_LIMITS.finalization, timeoutMs: 1 },
    };
    const failure = await expectPermanent(finalizer({ pdf })(doc.id), 'PdfTooComplexError');
    expect(failure.message).toMatch(/^The PDF is too complex to process: reading it took longer than/);
    expect((await finalColumns(doc.id)).final_sha256).toBeNull();
  });

  it('no certificate in production is retryable (SignerConfigError): a fixed certificate is picked up next time', async () => {
    const doc = await completedDocument(three());
    const { metrics, samples } = finalizationMetrics();
    const err = await finalizer({ p12: false, production: true, metrics })(doc.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'SignerConfigError', nonRetryable: false });
    expect(
      sumOf(await samples(), 'wathiq_finalization_failures_total', {
        reason: 'SignerConfigError',
        retryable: 'true',
      }),
    ).toBe(1);
    expect((err as Error).message).toMatch(/SIGNING_P12_PATH/);
  });

  it('a document whose approvers have not all completed is permanent (FinalizeStateError)', async () => {
    const doc = await completedDocument(three());
    await db()('approvers')
      .where({ id: doc.approvers[0]!.id })
      .update({ status: 'notified', acted_at: null });
    await expectPermanent(finalizer()(doc.id), 'FinalizeStateError');
  });

  it('a time-stamp authority that does not answer is retried (not a non-retryable failure)', async () => {
    const doc = await completedDocument(three());
    const err = await finalizer({ tsaUrl: 'http://127.0.0.1:9/tsa' })(doc.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ApplicationFailure);
    expect((err as Error).message).toMatch(/time-stamp authority/);
    expect((await finalColumns(doc.id)).final_sha256).toBeNull();
  });
});

describe('a finalization that takes its thread soon (the local attempt)', () => {
  it('is refused before any work when a round is queued, and gives its place back however it ends', async () => {
    const pdf: PdfLimits = {
      ...DEFAULT_PDF_LIMITS,
      finalization: { ...DEFAULT_PDF_LIMITS.finalization, concurrency: 1, timeoutMs: 120_011 },
    };
    const threads = createPdfFinalizer(pdf); // the same pool as the finalizer's (one per set of limits)
    const { metrics, samples } = finalizationMetrics();
    const soon = (id: string) => finalizer({ pdf, metrics })(id, { whenBusy: 'soon' });
    const written = async (id: string) => ({
      token: (await finalColumns(id)).final_token_sealed !== null,
      verification:
        (await db()('document_verifications')
          .where({ document_id: id })
          .first<object | undefined>('document_id')) !== undefined,
    });
    const [first, second] = [await completedDocument(three()), await completedDocument(three())];

    // Places kept for other attempts: the pool's one thread and the rounds behind it.
    const others = Array.from({ length: SOON_ROUNDS + 1 }, () => threads.admitSoon());
    const refused = await soon(first.id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ApplicationFailure);
    expect(refused).toMatchObject({ type: 'PdfBusyError', nonRetryable: false });
    expect(await written(first.id)).toEqual({ token: false, verification: false });
    for (const other of others) other.cancel();

    // Admitted: it composes; run again on the signed file, it ends before composing. Neither keeps its place.
    const done = await soon(first.id);
    expect((await soon(first.id)).document.download_url).toBe(done.document.download_url);
    await expect(finalizer({ pdf, metrics })(second.id)).resolves.toBeDefined();
    // A place left behind would refuse the last of these.
    const places = Array.from({ length: SOON_ROUNDS + 1 }, () => threads.admitSoon());
    for (const place of places) place.cancel();
    expect(threads.hasRoomSoon()).toBe(true);
    const counted = (await samples()).filter((s) => s.name === 'wathiq_finalization_failures_total');
    expect(counted).toEqual([]);
  });
});

describe('a local attempt that times out while it composes', () => {
  it('has its composition stopped: a retryable failure of its own kind, not counted as a failure', async () => {
    const doc = await completedDocument(three());
    const { file_key } = await finalColumns(doc.id);
    const slow = objectStreamBomb(64 * 1024 * 1024 * 1024); // inflates until a time limit far off
    await h.service.deps.storage.put(file_key, Readable.from([slow]));
    await db()('documents')
      .where({ id: doc.id })
      .update({ file_sha256: sha256Hex(slow) });
    const pdf: PdfLimits = {
      ...DEFAULT_PDF_LIMITS,
      decode: { ...DEFAULT_PDF_LIMITS.decode, maxDecodedBytes: 2 ** 40, maxDecodeRatio: 1e9 },
      finalization: { ...DEFAULT_PDF_LIMITS.finalization, timeoutMs: 120_012 },
    };
    const { metrics, samples } = finalizationMetrics();
    const attempt = new AbortController(); // the local activity's cancellation, as its time-out fires it
    const started = performance.now();
    const composing = finalizer({ pdf, metrics })(doc.id, { whenBusy: 'soon', signal: attempt.signal }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 2000));
    attempt.abort();
    const err = await composing;
    expect(performance.now() - started).toBeLessThan(60_000);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect(err).toMatchObject({ type: 'PdfTaskCancelledError', nonRetryable: false });
    expect((await finalColumns(doc.id)).final_sha256).toBeNull();
    const counted = (await samples()).filter((s) => s.name === 'wathiq_finalization_failures_total');
    expect(counted).toEqual([]);
  });
});

describe('finalization options', () => {
  it('adds an RFC 3161 time-stamp when TSA_URL is set, and the file stays valid and trusted', async () => {
    const tsa: TestTsa = await startTestTsa(h.pki.tsa);
    try {
      const doc = await completedDocument(three());
      const { document } = await finalizer({ tsaUrl: tsa.url })(doc.id);
      expect(tsa.requests).toBe(1);
      await runActivity(doc.id); // approves it (the file is done): the file is served from then on
      const file = path.join(h.dataDir, 'tsa.pdf');
      await writeFile(file, Buffer.from(await (await fetchPublic(h, document.download_url)).arrayBuffer()));
      const { signatures, output } = pdfsig(file, h.pki.nssDir);
      expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
      // The stored signature says B-T and names the time-stamp authority.
      const { signature } = await h.service.database
        .db('documents')
        .where({ id: doc.id })
        .first<{ signature: { level: string; timestamp_authority: string | null } }>('signature');
      expect(signature).toMatchObject({
        level: 'B-T',
        timestamp_authority: 'CN=Wathiq Test Time-Stamping Authority, O=Wathiq tests',
      });
    } finally {
      await tsa.close();
    }
  });

  it('puts a mark whose placement does not fit the page on the signatures page instead of failing', async () => {
    const [signer, ...rest] = three();
    const doc = await completedDocument([{ ...signer!, page: 1, x: 500, y: 10, width: 200 }, ...rest]);
    const { document } = await finalizer()(doc.id);
    await runActivity(doc.id); // approves it (the file is done): the file is served from then on
    const file = path.join(h.dataDir, 'misplaced.pdf');
    await writeFile(file, Buffer.from(await (await fetchPublic(h, document.download_url)).arrayBuffer()));
    expect(pdfsig(file, h.pki.nssDir).signatures[0]).toMatchObject({ valid: true, total: true });
    expect(qpdfCheck(file).clean).toBe(true);
    // Two original pages, then the signatures page with both marks, the misplaced one included.
    const boxes = pageText(file, 3);
    expect(boxes).toContain('Signatures and stamps');
    expect(boxes).toContain(signer!.name_en);
    expect(pageText(file, 1)).not.toContain(signer!.name_en);
  });
});

describe('the statements of a finalization', () => {
  it('reads the approvers and the document once: the approved event and the copies take the rows finalization read, its reservations return what they wrote', async () => {
    const doc = await completedDocument(three());
    // A pool of its own, so only this activity's statements are counted.
    const counted = createDb(h.service.database.url, { poolMax: 4 });
    const statements: string[] = [];
    counted.on('query', (q: { sql: string }) => statements.push(q.sql));
    try {
      const activities = createActivities(createWorkerDeps(h.service.config, counted, h.service.logger));
      // Time-outs long enough that the copies go out in this activity.
      const now = Date.now();
      const env = new MockActivityEnvironment(
        {
          scheduledTimestampMs: now,
          currentAttemptScheduledTimestampMs: now,
          startToCloseTimeoutMs: 600_000,
          scheduleToCloseTimeoutMs: 600_000,
        },
        { client: h.service.temporal.client },
      );
      const result = await env.run(
        (input: { documentId: string; idempotencyPrefix: string }) =>
          activities.finalizeAndSendSignedCopies(input),
        { documentId: doc.id, idempotencyPrefix: `copies-${doc.id}` },
      );
      expect(result).toEqual({ copies: { sent: 3, failed: 0 }, retryCopies: false });
      expect(
        statements.filter((sql) => /from "approvers" where "document_id" = \$1 order/i.test(sql)),
      ).toHaveLength(1);
      // Who stamped with the generated seal is on the approvers' rows it read: no query of its own.
      expect(statements.filter((sql) => /^select .*"generated_seal" = /i.test(sql))).toEqual([]);
      // The verification token: written, not read back.
      expect(statements.filter((sql) => sql.includes('document_verifications'))).toEqual([
        expect.stringMatching(/^insert into "document_verifications"/i) as string,
      ]);
      // The document: read once by finalization (its reservation returns the row it wrote), not again by the copies;
      // the move to approved is one UPDATE, which decides the finalization's state from the row itself, with no
      // locked read before it.
      expect(
        statements.filter((sql) => /^select .+ from "documents" where "id" = \$1 limit \$2$/i.test(sql)),
      ).toHaveLength(1);
      expect(statements.filter((sql) => /from "documents".*for no key update/i.test(sql))).toEqual([]);
      expect(statements.filter((sql) => /^update "documents" set "status"/i.test(sql))).toEqual([
        expect.stringMatching(/"finalization_state" = CASE WHEN finalization_state = 'failed'/) as string,
      ]);
    } finally {
      await counted.destroy();
    }
    const approved = await db()('document_events')
      .where({ document_id: doc.id, event: 'document.approved' })
      .first<{ data: { document: { approvers: { status: string }[] } } }>('data');
    const data = approved.data;
    expect(data.document.approvers.map((a) => a.status)).toEqual(['completed', 'completed', 'completed']);
  });
});
