import { randomBytes } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A valid PDF with `pages` A4 pages. */
export async function makePdf(pages = 1, label = 'Test'): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    doc.addPage([595.28, 841.89]).drawText(`${label} page ${i + 1}`, { x: 40, y: 780, size: 18, font });
  }
  return Buffer.from(await doc.save());
}

/**
 * A valid one-page PDF of exactly `size` bytes: an unreferenced stream of random bytes makes up the bulk, and
 * spaces after %%EOF (which readers tolerate) make up the rest.
 */
export async function makePdfOfSize(size: number): Promise<Buffer> {
  const build = async (filler: number) => {
    const doc = await PDFDocument.create();
    doc.addPage([595.28, 841.89]);
    if (filler > 0) doc.context.register(doc.context.stream(randomBytes(filler)));
    return Buffer.from(await doc.save({ useObjectStreams: false }));
  };
  const base = (await build(0)).length;
  const bytes = await build(Math.max(0, size - base - 200));
  if (bytes.length > size) throw new Error(`cannot make a PDF of ${size} bytes (got ${bytes.length})`);
  return Buffer.concat([bytes, Buffer.alloc(size - bytes.length, 0x20)]);
}
