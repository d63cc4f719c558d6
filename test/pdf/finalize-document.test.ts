import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FinalizeInputError } from '../../src/pdf/compose/marks.ts';
import { finalizeDocument } from '../../src/pdf/finalize-document.ts';
import { OID } from '../../src/pdf/sign/cms.ts';
import { tstInfo } from '../../src/pdf/sign/timestamp.ts';
import type { FinalizeApprover, FinalizeInput } from '../../src/pdf/types.ts';
import { readFixture } from '../fixtures/pdf/generate.ts';
import { chunk, deflatedZeros, ihdr, pngOf } from '../helpers/png.ts';
import { pageCount, pageText, pdfsig, qpdfCheck, renderPage } from '../helpers/pdf-tools.ts';
import { type TestPki, createTestPki } from '../helpers/pki.ts';
import { sampleApprovers, sampleInput } from '../helpers/sample-input.ts';
import { type TestTsa, startTestTsa } from '../helpers/tsa-server.ts';

const ARTIFACTS = path.resolve(import.meta.dirname, '../../test-artifacts');
const { asn1 } = forge;
type Asn1 = forge.asn1.Asn1;

let dir: string;
let pki: TestPki;
let original: Uint8Array;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'wathiq-finalize-'));
  pki = await createTestPki(path.join(dir, 'pki'));
  original = await readFixture('good');
  await mkdir(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function finalizeToFile(name: string, input: FinalizeInput) {
  const result = await finalizeDocument(input);
  const file = path.join(dir, `${name}.pdf`);
  await writeFile(file, result.pdf);
  return { result, file };
}

/** Pages whose text starts the audit certificate or continues it. */
function certificatePages(file: string, pages: number): number[] {
  const out: number[] = [];
  for (let p = 1; p <= pages; p++) if (pageText(file, p).includes('Audit certificate')) out.push(p);
  return out;
}

function signaturesPages(file: string, pages: number): number[] {
  const out: number[] = [];
  for (let p = 1; p <= pages; p++) if (pageText(file, p).includes('Signatures and stamps')) out.push(p);
  return out;
}

/** The CMS in the last signature's /Contents. */
function lastCms(pdf: Buffer): Asn1 {
  const text = pdf.toString('latin1');
  const at = text.lastIndexOf('/Contents <');
  const hex = text.slice(at + '/Contents <'.length, text.indexOf('>', at)).replace(/(00)+$/, '');
  return asn1.fromDer(Buffer.from(hex.length % 2 ? `${hex}0` : hex, 'hex').toString('binary'), false);
}

function signerInfo(cms: Asn1): Asn1[] {
  const signedData = ((cms.value as Asn1[])[1]?.value as Asn1[])[0] as Asn1;
  const infos = (signedData.value as Asn1[])[4] as Asn1;
  return ((infos.value as Asn1[])[0] as Asn1).value as Asn1[];
}

const attrOids = (attrs: Asn1) =>
  (attrs.value as Asn1[]).map((a) => asn1.derToOid((a.value as Asn1[])[0]?.value as string));

describe.each([
  { workflow: 'sequential', parallel: false },
  { workflow: 'parallel', parallel: true },
])('finalizeDocument, $workflow document with all four action types', ({ workflow, parallel }) => {
  let file: string;
  let pdf: Buffer;
  let approvers: FinalizeApprover[];
  let resultPages: number;

  beforeAll(async () => {
    approvers = sampleApprovers(6, { parallel });
    const out = await finalizeToFile(workflow, sampleInput(original, pki.signer, approvers));
    file = out.file;
    pdf = out.result.pdf;
    resultPages = out.result.pageCount;
    expect(out.result.sha256).toBe(createHash('sha256').update(pdf).digest('hex'));
  });

  it('is signed over the whole file by a trusted certificate (pdfsig)', () => {
    const { signatures, output } = pdfsig(file, pki.nssDir);
    expect(signatures, output).toHaveLength(1);
    expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
    expect(output).toContain('ETSI.CAdES.detached');
  });

  it('passes qpdf --check', () => {
    const check = qpdfCheck(file);
    expect(check.clean, check.output).toBe(true);
  });

  it('keeps the original bytes as the first revision', () => {
    expect(Buffer.from(pdf.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
  });

  it('has the original pages, then the signatures page, then the certificate pages', () => {
    const pages = pageCount(file);
    expect(pages).toBe(resultPages);
    const signatures = signaturesPages(file, pages);
    const certificate = certificatePages(file, pages);
    // Four of the six approvers sign or stamp: one signatures page; the certificate follows it.
    expect(signatures).toEqual([3]);
    expect(certificate.length).toBeGreaterThanOrEqual(1);
    expect(pages).toBe(2 + signatures.length + certificate.length);
    expect(certificate[0]).toBe(4);
  });

  it("prints every approver's Arabic and English names in logical order on the certificate", () => {
    const pages = pageCount(file);
    const text = certificatePages(file, pages)
      .map((p) => pageText(file, p))
      .join('\n');
    for (const a of approvers) {
      expect(text).toContain(a.nameEn);
      expect(text).toContain(a.nameAr);
      if (a.roleAr) expect(text).toContain(a.roleAr);
    }
    expect(text).toContain('WQT-2026-000042');
    expect(text).toContain(createHash('sha256').update(original).digest('hex').slice(0, 40));
    expect(text).toContain('عقد توريد أجهزة الحاسب');
    expect(text).toContain('+966 ••••');
    expect(text).toContain('wamid.');
    expect(text).toContain('203.0.113.');
    expect(text).toContain('(Asia/Riyadh)');
  });

  it('writes a picture of the certificate and signatures pages to test-artifacts/', () => {
    const pages = pageCount(file);
    const [first] = certificatePages(file, pages);
    renderPage(file, first ?? pages, path.join(ARTIFACTS, `certificate-${workflow}`));
    renderPage(file, 3, path.join(ARTIFACTS, `signatures-${workflow}`));
  });

  it('builds a PAdES CMS: content-type, message-digest, signing-certificate-v2, no signing-time', () => {
    const info = signerInfo(lastCms(pdf));
    const signed = info.find(
      (n) => n.tagClass === asn1.Class.CONTEXT_SPECIFIC && (n.type as number) === 0,
    ) as Asn1;
    const oids = attrOids(signed);
    expect(oids.sort()).toEqual([OID.contentType, OID.messageDigest, OID.signingCertificateV2].sort());
    expect(oids).not.toContain(OID.signingTime);
    expect(pdf.toString('latin1')).toMatch(/\/M \(D:20260301\d{6}Z\)/);
  });

  it('reports a digest mismatch when one byte in the signed range changes', async () => {
    const tampered = Buffer.from(pdf);
    // A byte of the binary comment after the header: the file still parses, the digest no longer matches.
    tampered[10] = (tampered[10] ?? 0) ^ 0x01;
    const tamperedFile = path.join(dir, `${workflow}-tampered.pdf`);
    await writeFile(tamperedFile, tampered);
    const { signatures, output } = pdfsig(tamperedFile, pki.nssDir);
    expect(signatures[0]?.valid, output).toBe(false);
    expect(output).toMatch(/Digest Mismatch|Signature is Invalid/);
  });
});

describe('finalizeDocument', () => {
  it('is deterministic: the same input gives the same bytes', async () => {
    const input = sampleInput(original, pki.signer, sampleApprovers(3));
    const a = await finalizeDocument(input);
    const b = await finalizeDocument(input);
    expect(a.sha256).toBe(b.sha256);
  });

  it('adds an RFC 3161 time-stamp as an unsigned attribute (PAdES B-T)', async () => {
    const tsa: TestTsa = await startTestTsa(pki.tsa);
    try {
      const input = sampleInput(original, pki.signer, sampleApprovers(2));
      const { result, file } = await finalizeToFile('tsa', { ...input, options: { tsaUrl: tsa.url } });
      expect(tsa.requests).toBe(1);
      const { signatures, output } = pdfsig(file, pki.nssDir);
      expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
      const info = signerInfo(lastCms(result.pdf));
      const unsigned = info.find(
        (n) => n.tagClass === asn1.Class.CONTEXT_SPECIFIC && (n.type as number) === 1,
      ) as Asn1;
      expect(attrOids(unsigned)).toEqual([OID.signatureTimeStampToken]);
      const token = (((unsigned.value as Asn1[])[0]?.value as Asn1[])[1]?.value as Asn1[])[0] as Asn1;
      const signature = Buffer.from(info[5]?.value as string, 'binary');
      expect(tstInfo(token).imprint.equals(createHash('sha256').update(signature).digest())).toBe(true);
    } finally {
      await tsa.close();
    }
  });

  it('fails (to be retried) when the time-stamp authority does not answer', async () => {
    const input = sampleInput(original, pki.signer, sampleApprovers(1));
    await expect(
      finalizeDocument({ ...input, options: { tsaUrl: 'http://127.0.0.1:9/tsa', tsaTimeoutMs: 2000 } }),
    ).rejects.toThrow(/time-stamp authority/);
  });

  it('places marks at the approvers’ own placement, upright on rotated pages', async () => {
    const rotated = await readFixture('rotated-mixed');
    const approvers = sampleApprovers(2).map((a, i) => ({
      ...a,
      placement: i === 0 ? { page: 3, x: 40, y: 60, width: 160 } : { page: 5, x: 700, y: 40, width: 120 },
    }));
    const { result, file } = await finalizeToFile('placed', sampleInput(rotated, pki.signer, approvers));
    // No signatures page: both marks sit on their pages.
    expect(result.pageCount).toBe(5 + certificatePages(file, result.pageCount).length);
    expect(pdfsig(file, pki.nssDir).signatures[0]).toMatchObject({ valid: true, total: true });
    expect(qpdfCheck(file).clean).toBe(true);
    expect(pageText(file, 3)).toContain(approvers[0]?.nameEn);
    renderPage(file, 3, path.join(ARTIFACTS, 'placement-rotated-90'), 60);
    renderPage(file, 5, path.join(ARTIFACTS, 'placement-rotated-270'), 60);
  });

  it('draws the name with a note in place of an image it cannot read, and says so on the certificate', async () => {
    // Images stored before uploads were checked completely: a drawn signature with a damaged chunk (placed on
    // page 1) and a stamp that is a decompression bomb. Neither fails the document.
    const approvers = sampleApprovers(5);
    const signer = approvers[0]!;
    const stamper = approvers[4]!;
    const damaged = Buffer.from(signer.signaturePng!);
    const idat = damaged.indexOf('IDAT');
    damaged[idat + 10] = (damaged[idat + 10] as number) ^ 0xff;
    signer.signaturePng = damaged;
    signer.placement = { page: 1, x: 60, y: 80, width: 180 };
    stamper.stampPng = pngOf(ihdr(1, 1), chunk('IDAT', await deflatedZeros(20 * 1024 * 1024)), chunk('IEND'));

    const { result, file } = await finalizeToFile(
      'unreadable-images',
      sampleInput(original, pki.signer, approvers),
    );
    expect(result.warnings).toEqual([
      `The sign image of ${signer.nameEn} could not be read (IDAT chunk fails its CRC); their name is shown instead.`,
      `The stamp image of ${stamper.nameEn} could not be read (the image data inflates past the 5 bytes its header implies); their name is shown instead.`,
    ]);
    expect(pdfsig(file, pki.nssDir).signatures[0]).toMatchObject({ valid: true, total: true, trusted: true });
    expect(qpdfCheck(file).clean).toBe(true);
    const page1 = pageText(file, 1);
    expect(page1).toContain(signer.nameEn);
    expect(page1).toContain('Signature image unreadable; name shown');
    const [boxes] = signaturesPages(file, result.pageCount);
    expect(pageText(file, boxes!)).toContain('Stamp image unreadable; name shown');
    const certificate = certificatePages(file, result.pageCount)
      .map((p) => pageText(file, p))
      .join('\n')
      .replace(/\s+/g, ' ');
    expect(certificate).toContain(
      'Signed (drawn signature; the image could not be read, so the name is shown in its place)',
    );
    expect(certificate).toContain(
      'Stamped (uploaded stamp; the image could not be read, so the name is shown in its place)',
    );
    renderPage(file, 1, path.join(ARTIFACTS, 'unreadable-signature-placed'), 80);
    renderPage(file, boxes!, path.join(ARTIFACTS, 'unreadable-stamp-box'), 80);
  });

  it('refuses a placement outside the page, and a changed original', async () => {
    const [a] = sampleApprovers(1);
    const bad = { ...(a as FinalizeApprover), placement: { page: 1, x: 500, y: 10, width: 200 } };
    await expect(finalizeDocument(sampleInput(original, pki.signer, [bad]))).rejects.toBeInstanceOf(
      FinalizeInputError,
    );
    const input = sampleInput(original, pki.signer, [a as FinalizeApprover]);
    await expect(
      finalizeDocument({ ...input, document: { ...input.document, originalSha256: '0'.repeat(64) } }),
    ).rejects.toThrow(/SHA-256/);
  });

  it('continues the certificate over several pages for 50 approvers', async () => {
    const approvers = sampleApprovers(50);
    const { result, file } = await finalizeToFile('fifty', sampleInput(original, pki.signer, approvers));
    const certificate = certificatePages(file, result.pageCount);
    const signatures = signaturesPages(file, result.pageCount);
    expect(certificate.length).toBeGreaterThan(3);
    expect(signatures.length).toBe(
      Math.ceil(approvers.filter((a) => a.actionType === 'sign' || a.actionType === 'stamp').length / 8),
    );
    expect(result.pageCount).toBe(2 + signatures.length + certificate.length);
    expect(pdfsig(file, pki.nssDir).signatures[0]).toMatchObject({ valid: true, total: true, trusted: true });
    const text = certificate.map((p) => pageText(file, p)).join('\n');
    for (const x of approvers) {
      expect(text).toContain(x.nameEn);
      expect(text).toContain(x.nameAr);
    }
  });
});
