import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalizeDocument } from '../../src/pdf/finalize-document.ts';
import { inspectPdf } from '../../src/pdf/inspect-pdf.ts';
import { type FixtureName, readFixture } from '../fixtures/pdf/generate.ts';
import { pageCount, pdfsig, qpdfCheck } from '../helpers/pdf-tools.ts';
import { type TestPki, createTestPki } from '../helpers/pki.ts';
import { sampleApprovers, sampleInput } from '../helpers/sample-input.ts';

let dir: string;
let pki: TestPki;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-wild-'));
  pki = await createTestPki(path.join(dir, 'pki'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Each input is either finalized validly or refused at upload with a reason a person can act on. */
const FINALIZED: { name: FixtureName; pages: number; signaturesBefore: number }[] = [
  { name: 'objstm-pdflib', pages: 3, signaturesBefore: 0 },
  { name: 'objstm-qpdf', pages: 2, signaturesBefore: 0 },
  { name: 'linearized', pages: 2, signaturesBefore: 0 },
  { name: 'incremental', pages: 2, signaturesBefore: 0 },
  { name: 'forms-annots', pages: 1, signaturesBefore: 0 },
  { name: 'rotated-mixed', pages: 5, signaturesBefore: 0 },
  { name: 'signed', pages: 2, signaturesBefore: 1 },
  { name: 'broken-xref', pages: 2, signaturesBefore: 0 },
];

const REFUSED: { name: FixtureName; reason: RegExp }[] = [
  { name: 'encrypted', reason: /encrypted; upload it without a password/ },
  { name: 'not-a-pdf', reason: /not a PDF/ },
  { name: 'truncated', reason: /truncated or damaged/ },
  { name: 'certified', reason: /certified by its author/ },
  { name: 'signed-broken-xref', reason: /already signed, but its internal structure is damaged/ },
];

describe('PDFs seen in the wild', () => {
  it.each(FINALIZED)(
    '$name: accepted at upload, finalized validly',
    async ({ name, pages, signaturesBefore }) => {
      const original = await readFixture(name);
      const inspection = await inspectPdf(original);
      expect(inspection).toEqual({ ok: true, pageCount: pages, signed: signaturesBefore > 0 });

      const result = await finalizeDocument(sampleInput(original, pki.signer, sampleApprovers(4)));
      const file = path.join(dir, `${name}.pdf`);
      await writeFile(file, result.pdf);
      const { signatures, output } = pdfsig(file, pki.nssDir);
      expect(signatures, output).toHaveLength(signaturesBefore + 1);
      // Earlier signatures still verify (they cover their own revision); ours covers the whole file.
      for (const s of signatures) expect(s.valid, output).toBe(true);
      expect(signatures[signatures.length - 1], output).toMatchObject({ total: true, trusted: true });
      const check = qpdfCheck(file);
      expect(check.clean, check.output).toBe(true);
      expect(pageCount(file)).toBe(result.pageCount);
      expect(result.pageCount).toBeGreaterThanOrEqual(pages + 2);
    },
  );

  it.each(REFUSED)('$name: refused at upload with a clear reason', async ({ name, reason }) => {
    const inspection = await inspectPdf(await readFixture(name));
    expect(inspection.ok).toBe(false);
    if (!inspection.ok) {
      expect(inspection.reason).toMatch(reason);
      expect(inspection.reason).toMatch(/^[A-Z].*\.$/);
    }
  });
});
