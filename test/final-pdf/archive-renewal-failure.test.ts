import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchiveRenewer, recordArchiveTimestamp } from '../../src/features/approval/archive-renewal.ts';
import { createLogger } from '../../src/logger.ts';
import { createMetricsRegistry, createWorkerMetrics } from '../../src/metrics/metrics.ts';
import { createLocalStorage } from '../../src/storage/local-storage.ts';
import { parseSamples, sumOf } from '../helpers/prometheus.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.ts';
import { seedDocument } from '../helpers/whatsapp-fixtures.ts';

/**
 * A renewal that cannot be done (the stored file is gone, or is not the file the document names) is counted in
 * wathiq_archive_renewals_total{result="failed"}, keeps its error on the row, changes nothing else and does not
 * stop the rest of the batch. The successful renewal, against a real time-stamp authority, is in
 * archive-renewal.test.ts.
 */
let database: TestDatabase;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-renewal-failure-'));
});

afterAll(async () => {
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('archive renewal failures', () => {
  it('are counted and kept on the row, one per file, while the document keeps its file', async () => {
    const { db } = database;
    const storage = createLocalStorage(dir);
    const registry = createMetricsRegistry();
    const metrics = createWorkerMetrics(registry, { templates: [] });
    const logger = createLogger({ logLevel: 'silent' });

    // One file missing from storage, one whose stored bytes are not the ones the document names.
    const missing = await seedDocument(db, 1);
    const altered = await seedDocument(db, 1);
    const bytes = Buffer.from('%PDF-1.7 stored\n');
    await storage.put('final/altered.pdf', Readable.from([bytes]), { contentType: 'application/pdf' });
    const finals = [
      { id: missing.documentId, key: 'final/missing.pdf', sha: sha256(Buffer.from('gone')) },
      { id: altered.documentId, key: 'final/altered.pdf', sha: sha256(Buffer.from('other bytes')) },
    ];
    for (const f of finals) {
      await db('documents').where({ id: f.id }).update({ final_file_key: f.key, final_sha256: f.sha });
      await recordArchiveTimestamp(db, f.id, new Date(Date.now() + 24 * 3600_000));
    }

    const renew = createArchiveRenewer({
      db,
      storage,
      logger,
      tsaUrl: 'http://127.0.0.1:9/unreached',
      revocation: { timeoutMs: 1000, retries: 0, maxBytes: 1 << 20 },
      metrics: metrics.archive,
    });
    expect(await renew({ marginDays: 30, batchSize: 10 })).toEqual({ renewed: 0, failed: 2 });

    const samples = parseSamples(await registry.metrics());
    expect(sumOf(samples, 'wathiq_archive_renewals_total', { result: 'failed' })).toBe(2);
    expect(sumOf(samples, 'wathiq_archive_renewals_total', { result: 'renewed' })).toBe(0);
    const rows = await db('archive_timestamps')
      .whereIn(
        'document_id',
        finals.map((f) => f.id),
      )
      .select<{ document_id: string; last_error: string | null; renewals: number }[]>(
        'document_id',
        'last_error',
        'renewals',
      );
    const byId = new Map(rows.map((r) => [r.document_id, r]));
    expect(byId.get(missing.documentId)).toMatchObject({ renewals: 0 });
    expect(byId.get(missing.documentId)?.last_error).toMatch(/final\/missing\.pdf is missing/);
    expect(byId.get(altered.documentId)).toMatchObject({ renewals: 0 });
    expect(byId.get(altered.documentId)?.last_error).toMatch(/does not match its SHA-256/);
    for (const f of finals) {
      expect(await db('documents').where({ id: f.id }).first('final_file_key', 'final_sha256')).toEqual({
        final_file_key: f.key,
        final_sha256: f.sha,
      });
    }
    expect(await storage.get('final/altered.pdf')).not.toBeNull();
  });
});
