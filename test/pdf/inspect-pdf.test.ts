import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PDF_PAGES, inspectPdf } from '../../src/pdf/inspect-pdf.ts';
import { generateFixtures, readFixture, simplePdf } from '../fixtures/pdf/generate.ts';

describe('inspectPdf', () => {
  let dir: string;
  beforeAll(async () => {
    // Regenerate into scratch so the generator is exercised; the committed copies are read too.
    dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-pdf-fixtures-'));
    await generateFixtures(dir);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts a good PDF and counts its pages', async () => {
    for (const from of [dir, undefined]) {
      expect(await inspectPdf(await readFixture('good', from))).toEqual({
        ok: true,
        pageCount: 2,
        signed: false,
      });
    }
  });

  it('refuses an encrypted PDF', async () => {
    expect(await inspectPdf(await readFixture('encrypted', dir))).toEqual({
      ok: false,
      reason: 'The PDF is encrypted; upload it without a password.',
    });
  });

  it('refuses a text file named .pdf', async () => {
    expect(await inspectPdf(await readFixture('not-a-pdf', dir))).toEqual({
      ok: false,
      reason: 'The file is not a PDF (it does not start with %PDF-).',
    });
    expect(await inspectPdf(new Uint8Array())).toMatchObject({ ok: false });
  });

  it('refuses a truncated PDF', async () => {
    expect(await inspectPdf(await readFixture('truncated', dir))).toEqual({
      ok: false,
      reason: 'The PDF is truncated or damaged and could not be read.',
    });
  });

  it('refuses a PDF whose body is garbage behind a valid header and trailer', async () => {
    const good = await readFixture('good', dir);
    const broken = Buffer.concat([
      Buffer.from('%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nendobj\n'),
      Buffer.from(good.subarray(good.length - 200)),
    ]);
    expect(await inspectPdf(broken)).toEqual({
      ok: false,
      reason: 'The PDF is truncated or damaged and could not be read.',
    });
  });

  it(`refuses more than ${MAX_PDF_PAGES} pages and names the count`, async () => {
    const many = await simplePdf(
      Array.from({ length: MAX_PDF_PAGES + 1 }, () => ({ width: 200, height: 200 })),
    );
    const result = await inspectPdf(many);
    expect(result).toEqual({
      ok: false,
      reason: `The PDF has ${MAX_PDF_PAGES + 1} pages; at most ${MAX_PDF_PAGES} pages are accepted.`,
    });
  });
});
