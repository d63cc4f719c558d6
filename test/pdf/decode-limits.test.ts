import { describe, expect, it } from 'vitest';
import { FinalizeError, finalizeDocument } from '../../src/pdf/finalize-document.ts';
import { inspectPdf } from '../../src/pdf/inspect-pdf.ts';
import { DEFAULT_DECODE_LIMITS, type DecodeLimits } from '../../src/pdf/limits.ts';
import { readFixture } from '../fixtures/pdf/generate.ts';
import {
  buildPdf,
  deflated,
  deflatedZeros,
  longFilterChainPdf,
  manyObjectsPdf,
  objectStreamBomb,
  objectStreamContent,
  pdfWithObjectStream,
} from '../helpers/pdf-bombs.ts';
import { makePdf } from '../helpers/pdf.ts';
import { selfSignedSigner } from '../helpers/pki.ts';
import { sampleApprovers, sampleInput } from '../helpers/sample-input.ts';

const MiB = 1024 * 1024;
const EXPANDS = /^The PDF expands to more than .+ when decompressed; at most 16 times its size/;
const limits = (over: Partial<DecodeLimits>): DecodeLimits => ({ ...DEFAULT_DECODE_LIMITS, ...over });

async function reasonOf(pdf: Uint8Array, decode?: DecodeLimits): Promise<string | undefined> {
  const inspection = await inspectPdf(pdf, decode);
  return inspection.ok ? undefined : inspection.reason;
}

describe('the pre-scan of decoded bytes, at upload', () => {
  it('refuses a 1 KB file whose object stream inflates through two FlateDecode filters to 256 MB', async () => {
    const bomb = objectStreamBomb(256 * MiB);
    expect(bomb.length).toBeLessThan(1500);
    const reason = await reasonOf(bomb);
    expect(reason).toMatch(EXPANDS);
    // The budget quoted is 16 times the file's size.
    expect(reason).toContain(`more than ${Math.floor((16 * bomb.length) / 1024)}`);
  });

  it('refuses a stream behind more filters than PDF_MAX_FILTERS, and accepts two', async () => {
    expect(await reasonOf(longFilterChainPdf(5))).toBe(
      'The PDF has a stream compressed with 5 filters in a row; at most 2 are accepted.',
    );
    expect(await reasonOf(longFilterChainPdf(3))).toMatch(/3 filters in a row/);
    expect(await inspectPdf(longFilterChainPdf(2))).toEqual({ ok: true, pageCount: 1, signed: false });
    expect(await inspectPdf(longFilterChainPdf(3), limits({ maxFilters: 3 }))).toMatchObject({ ok: true });
  });

  it('accepts ordinary files with object and cross-reference streams', async () => {
    // pdf-lib writes object streams; qpdf object and cross-reference streams; linearized files two sections.
    expect(await inspectPdf(await makePdf(3))).toEqual({ ok: true, pageCount: 3, signed: false });
    for (const name of ['objstm-qpdf', 'objstm-pdflib', 'linearized', 'incremental'] as const) {
      expect(await inspectPdf(await readFixture(name)), name).toMatchObject({ ok: true });
    }
  });

  it('accepts a file that decodes to exactly its budget and refuses one byte past it', async () => {
    const decoded = 200_000;
    const pdf = pdfWithObjectStream(decoded);
    const ratio = 1e6; // the absolute bound decides
    expect(await inspectPdf(pdf, limits({ maxDecodedBytes: decoded, maxDecodeRatio: ratio }))).toMatchObject({
      ok: true,
    });
    expect(await reasonOf(pdf, limits({ maxDecodedBytes: decoded - 1, maxDecodeRatio: ratio }))).toMatch(
      /^The PDF expands to more than 195.3 KB when decompressed/,
    );

    // The same through the ratio: budget = ratio x file size.
    const atRatio = Math.ceil(decoded / pdf.length);
    expect(await inspectPdf(pdf, limits({ maxDecodeRatio: atRatio }))).toMatchObject({ ok: true });
    expect(await reasonOf(pdf, limits({ maxDecodeRatio: (decoded - 1) / pdf.length }))).toMatch(/expands/);
  });

  it('refuses object streams compressed with anything but FlateDecode', async () => {
    const content = objectStreamContent(2000);
    const pdf = buildPdf([
      {
        dict: '/Type /ObjStm /N 1 /First 6 /Filter [/ASCIIHexDecode /FlateDecode]',
        data: Buffer.from(`${deflated(content).toString('hex')}>`),
      },
    ]);
    expect(await reasonOf(pdf)).toMatch(
      /compresses its object streams in an unusual way \(\/ASCIIHexDecode \/FlateDecode\); only \/FlateDecode/,
    );
  });

  it('refuses an object stream whose /Type the reader would look up elsewhere', async () => {
    const pdf = buildPdf([
      '/ObjStm',
      { dict: '/Type 5 0 R /N 1 /First 6 /Filter /FlateDecode', data: deflated(objectStreamContent(100)) },
    ]);
    expect(await reasonOf(pdf)).toMatch(/structure is unusual \(an indirect stream \/Type/);
  });

  it('refuses too many objects and too many object streams', async () => {
    const many = manyObjectsPdf(2000);
    expect(await inspectPdf(many, limits({ maxDecodeRatio: 100 }))).toMatchObject({ ok: true });
    expect(await reasonOf(many, limits({ maxDecodeRatio: 100, maxObjects: 1000 }))).toBe(
      'The PDF has more than 1000 objects; at most 1000 are accepted.',
    );
    const two = buildPdf(
      [100, 101].map((n) => ({
        dict: `/Type /ObjStm /N 1 /First ${`${n} 0 `.length} /Filter /FlateDecode`,
        data: deflated(objectStreamContent(300, n)),
      })),
    );
    expect(await inspectPdf(two)).toMatchObject({ ok: true });
    expect(await reasonOf(two, limits({ maxObjectStreams: 1 }))).toBe(
      'The PDF has more than 1 object streams; at most 1 are accepted.',
    );
  });

  it('refuses an object stream zlib cannot inflate', async () => {
    const data = deflated(objectStreamContent(5000));
    data[10] = data[10]! ^ 0xff;
    data[11] = data[11]! ^ 0xff;
    const pdf = buildPdf([{ dict: '/Type /ObjStm /N 1 /First 6 /Filter /FlateDecode', data }]);
    expect(await reasonOf(pdf)).toMatch(
      /damaged: one of its compressed object streams cannot be decompressed/,
    );
  });

  it('charges a cross-reference stream reached only through startxref (hidden inside another stream)', async () => {
    // The startxref chain is walked as checkXref walks it: a bomb there is refused although no top-level
    // object holds it.
    const hidden = Buffer.concat([
      Buffer.from('6 0 obj\n<< /Type /XRef /Size 7 /W [1 4 2] /Filter [/FlateDecode /FlateDecode] /Length '),
      Buffer.from(String(deflated(deflatedZeros(64 * MiB)).length)),
      Buffer.from(' >>\nstream\n'),
      deflated(deflatedZeros(64 * MiB)),
      Buffer.from('\nendstream\nendobj\n'),
    ]);
    const pdf = buildPdf([{ dict: '', data: hidden }]);
    const at = pdf.indexOf(hidden);
    const tail = pdf.lastIndexOf('startxref');
    const bomb = Buffer.concat([pdf.subarray(0, tail), Buffer.from(`startxref\n${at}\n%%EOF\n`)]);
    expect(await reasonOf(bomb)).toMatch(EXPANDS);
  });
});

describe('the pre-scan at finalization', () => {
  it('applies the same limits: a bomb is refused (FinalizeError), an ordinary file is finalized', async () => {
    const signer = selfSignedSigner('Decode limits test');
    const bomb = objectStreamBomb(256 * MiB);
    const refused = await finalizeDocument(sampleInput(bomb, signer, sampleApprovers(2))).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(FinalizeError);
    expect((refused as FinalizeError).code).toBe('original_refused');
    expect((refused as FinalizeError).message).toMatch(EXPANDS);

    const ordinary = pdfWithObjectStream(20_000);
    const result = await finalizeDocument(sampleInput(ordinary, signer, sampleApprovers(2)));
    expect(result.pageCount).toBeGreaterThanOrEqual(3);
  });
});
