import { createHash } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageCount, pageText, pdfsig, qpdfCheck, renderPage } from '../helpers/pdf-tools.ts';
import {
  ARTIFACTS,
  type BilingualApprover,
  type CreatedDocument,
  createBilingualDocument,
  download,
  type DownloadBody,
  driveToApproval,
  fetchPublic,
  type FinalPdfHarness,
  ORIGINAL_PAGES,
  PUBLIC_BASE_URL,
  sixApprovers,
  startFinalPdfHarness,
} from '../helpers/final-pdf.ts';
import { documentEventsStore, fullEventData } from '../../src/features/events/document-events-store.ts';

let h: FinalPdfHarness;
beforeAll(async () => {
  h = await startFinalPdfHarness();
  await mkdir(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await h.close();
  await rm(h.dataDir, { recursive: true, force: true });
});

const pagesWith = (file: string, pages: number, heading: string): number[] =>
  Array.from({ length: pages }, (_, i) => i + 1).filter((p) => pageText(file, p).includes(heading));

describe.each([
  // Sequential: in order, the first signer placed on page 1. Parallel: everyone at once, acting in reverse.
  { workflow: 'sequential' as const, placeFirst: true, order: [0, 1, 2, 3, 4, 5] },
  { workflow: 'parallel' as const, placeFirst: false, order: [5, 4, 3, 2, 1, 0] },
])('a $workflow document with all four action types, once approved', ({ workflow, placeFirst, order }) => {
  let approvers: BilingualApprover[];
  let doc: CreatedDocument;
  let data: DownloadBody['data'];
  let pdf: Buffer;
  let file: string;
  let etag: string;

  beforeAll(async () => {
    approvers = sixApprovers({ placeFirst });
    doc = await createBilingualDocument(h, workflow, approvers);
    await driveToApproval(h, doc, approvers, order);
    const res = await download(h, doc.id);
    const body = (await res.json()) as DownloadBody;
    expect(res.status, JSON.stringify(body)).toBe(200);
    data = body.data;
    const fetched = await fetchPublic(h, data.download_url);
    expect(fetched.status).toBe(200);
    etag = fetched.headers.get('etag')!;
    pdf = Buffer.from(await fetched.arrayBuffer());
    file = path.join(h.dataDir, `${workflow}.pdf`);
    await writeFile(file, pdf);
  });

  it('GET /documents/{id}/download answers the permanent URL, the deadline and the file name', async () => {
    expect(data.filename).toBe(`${doc.reference}.pdf`);
    expect(data.expires_at).toBe(doc.expires_at);
    expect(data.expires_at).toMatch(/\+00:00$/);
    const match = new RegExp(`^${PUBLIC_BASE_URL}/files/([A-Za-z0-9_-]+)/${doc.reference}\\.pdf$`).exec(
      data.download_url,
    );
    expect(match, data.download_url).not.toBeNull();
    // 32 random bytes, base64url: 256 bits.
    expect(match![1]).toHaveLength(43);
    // Asked again, the same URL.
    expect(((await (await download(h, doc.id)).json()) as DownloadBody).data).toEqual(data);
  });

  it('tells what signed it: level, time and certificate, on the download and the document', async () => {
    const leaf = h.pki.leaf.cert;
    const expected = {
      level: 'B-B',
      signed_at: expect.stringMatching(/\+00:00$/) as unknown,
      certificate: {
        subject: 'CN=Wathiq Test Document Signing, O=Wathiq tests',
        issuer: 'CN=Wathiq Test Root CA, O=Wathiq tests',
        serial: leaf.serialNumber.toUpperCase(),
        not_after: leaf.validity.notAfter.toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      },
      timestamp_authority: null,
    };
    expect((data as unknown as { signature: unknown }).signature).toEqual(expected);
    const res = await h.service.request(`/documents/${doc.id}`, { account: h.account });
    const body = (await res.json()) as { data: { signature: { signed_at: string }; completed_at: string } };
    expect(body.data.signature).toEqual(expected);
    expect(body.data.signature.signed_at).toBe(body.data.completed_at);
  });

  it('is served to anyone holding the URL, as application/pdf, cached by their own browser only', async () => {
    const res = await fetchPublic(h, data.download_url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    // Never `public`: a shared cache would keep the contract, and a replaced URL must stop working at once.
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="${doc.reference}.pdf"`);
    expect(Number(res.headers.get('content-length'))).toBe(pdf.length);
    expect(etag).toBe(`"${createHash('sha256').update(pdf).digest('hex')}"`);
    await res.arrayBuffer();
  });

  it('is signed over the whole file by a trusted certificate (pdfsig)', () => {
    const { signatures, output } = pdfsig(file, h.pki.nssDir);
    expect(signatures, output).toHaveLength(1);
    expect(signatures[0], output).toMatchObject({ valid: true, total: true, trusted: true });
    expect(output).toContain('Signature is Valid.');
    expect(output).toContain('Total document signed');
    expect(output).toContain('Certificate is Trusted.');
    expect(output).toContain('Wathiq Test Document Signing');
    // Without the test CA in the trust store the signature is still valid, only not trusted.
    const untrusted = pdfsig(file);
    expect(untrusted.signatures[0], untrusted.output).toMatchObject({ valid: true, total: true });
  });

  it('passes qpdf --check', () => {
    const check = qpdfCheck(file);
    expect(check.clean, check.output).toBe(true);
  });

  it('has the original pages, then one signatures page, then the certificate page(s)', () => {
    const pages = pageCount(file);
    const signatures = pagesWith(file, pages, 'Signatures and stamps');
    const certificate = pagesWith(file, pages, 'Audit certificate');
    expect(signatures).toEqual([ORIGINAL_PAGES + 1]);
    expect(certificate.length).toBeGreaterThanOrEqual(1);
    expect(certificate[0]).toBe(ORIGINAL_PAGES + 2);
    expect(pages).toBe(ORIGINAL_PAGES + signatures.length + certificate.length);
    if (placeFirst) {
      // The placed signature sits on page 1, captioned; the other three marks are boxes on the signatures page.
      expect(pageText(file, 1)).toContain('Sarah Al-Mutairi');
    }
    const boxes = pageText(file, ORIGINAL_PAGES + 1);
    for (const a of approvers.filter((x) => x.action_type === 'sign' || x.action_type === 'stamp')) {
      if (placeFirst && a === approvers[0]) expect(boxes).not.toContain(a.name_en);
      else expect(boxes).toContain(a.name_en);
    }
  });

  it("prints each approver's Arabic and English names in logical order on the certificate", async () => {
    const pages = pageCount(file);
    const certificate = pagesWith(file, pages, 'Audit certificate');
    const text = certificate.map((p) => pageText(file, p)).join('\n');
    for (const a of approvers) {
      expect(text).toContain(a.name_ar);
      expect(text).toContain(a.name_en);
      expect(text).toContain(a.role_ar);
    }
    expect(text).toContain(doc.reference);
    expect(text).toContain('عقد توريد أجهزة الحاسب');
    expect(text).toContain('Computer equipment supply contract');
    const original = await h.service.database
      .db('documents')
      .where({ id: doc.id })
      .first<{ file_sha256: string }>();
    expect(text).toContain(original.file_sha256.slice(0, 32));
    expect(text).toContain('wamid.'); // button actions name their WhatsApp message
    expect(text).toContain('127.0.0.1'); // page actions their address
    expect(text).toContain('(Asia/Riyadh)');
    renderPage(file, certificate[0]!, path.join(ARTIFACTS, `final-pdf-${workflow}-certificate`));
    renderPage(file, ORIGINAL_PAGES + 1, path.join(ARTIFACTS, `final-pdf-${workflow}-signatures`));
    // The last certificate page: an approver who acted with a WhatsApp button.
    renderPage(file, certificate.at(-1)!, path.join(ARTIFACTS, `final-pdf-${workflow}-certificate-last`));
    if (placeFirst) renderPage(file, 1, path.join(ARTIFACTS, `final-pdf-${workflow}-page1`), 72);
  });

  it('reports a digest mismatch when one byte in the signed range changes', async () => {
    const tampered = Buffer.from(pdf);
    // A byte of the binary comment after the header: the file still parses, the digest no longer matches.
    tampered[10] = (tampered[10] ?? 0) ^ 0x01;
    const tamperedFile = path.join(h.dataDir, `${workflow}-tampered.pdf`);
    await writeFile(tamperedFile, tampered);
    const { signatures, output } = pdfsig(tamperedFile, h.pki.nssDir);
    expect(signatures[0]?.valid, output).toBe(false);
    expect(output).toMatch(/Digest Mismatch|Signature is Invalid/);
  });

  it('names nothing under another file name, a malformed token or a token of no document: 404 File', async () => {
    const url = new URL(data.download_url);
    const [, , token, filename] = url.pathname.split('/');
    const wrongs = [
      `${PUBLIC_BASE_URL}/files/${token}/WQT-1999-000001.pdf`,
      `${PUBLIC_BASE_URL}/files/${token}/${filename}.pdf`,
      `${PUBLIC_BASE_URL}/files/${token!.slice(0, 10)}/${filename}`,
      `${PUBLIC_BASE_URL}/files/${token}!/${filename}`,
      `${PUBLIC_BASE_URL}/files/${'A'.repeat(43)}/${filename}`,
      `${PUBLIC_BASE_URL}/files/__proto__/${filename}`,
    ];
    for (const wrong of wrongs) {
      const res = await fetchPublic(h, wrong);
      expect(res.status, wrong).toBe(404);
      const body = (await res.json()) as { success: boolean; error: { message: string } };
      expect(body.success, wrong).toBe(false);
      expect(body.error.message, wrong).toBe('File not found');
    }
  });

  it('answers ranges (206, 416), If-None-Match (304) and HEAD on the public URL', async () => {
    const size = pdf.length;
    const part = await fetchPublic(h, data.download_url, { headers: { range: 'bytes=0-99' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 0-99/${size}`);
    expect(part.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await part.arrayBuffer()).equals(pdf.subarray(0, 100))).toBe(true);

    const tail = await fetchPublic(h, data.download_url, { headers: { range: 'bytes=-30' } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(`bytes ${size - 30}-${size - 1}/${size}`);
    expect(Buffer.from(await tail.arrayBuffer()).equals(pdf.subarray(size - 30))).toBe(true);

    const open = await fetchPublic(h, data.download_url, { headers: { range: `bytes=${size - 5}-` } });
    expect(open.status).toBe(206);
    expect(Buffer.from(await open.arrayBuffer()).equals(pdf.subarray(size - 5))).toBe(true);

    const beyond = await fetchPublic(h, data.download_url, { headers: { range: `bytes=${size}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${size}`);
    expect(((await beyond.json()) as { success: boolean }).success).toBe(false);

    // A stale If-Range: the whole (current) file instead of a piece of it.
    const stale = await fetchPublic(h, data.download_url, {
      headers: { range: 'bytes=0-9', 'if-range': '"0000"' },
    });
    expect(stale.status).toBe(200);
    expect((await stale.arrayBuffer()).byteLength).toBe(size);

    const cached = await fetchPublic(h, data.download_url, { headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(cached.headers.get('etag')).toBe(etag);
    expect(await cached.text()).toBe('');
    const weak = await fetchPublic(h, data.download_url, { headers: { 'if-none-match': `"x", W/${etag}` } });
    expect(weak.status).toBe(304);
    await weak.text();

    const head = await fetchPublic(h, data.download_url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(size));
    expect(head.headers.get('content-type')).toBe('application/pdf');
    expect(head.headers.get('etag')).toBe(etag);
    expect(await head.text()).toBe('');
  });

  it('carries the download URL and file name in the document.approved event', async () => {
    // The URL is a credential: kept sealed beside the event, put back for delivery.
    const event = (await documentEventsStore(h.service.database.db).findByDedupeKey(
      `document.approved:${doc.id}`,
    ))!;
    expect(event.data.document).not.toHaveProperty('download_url');
    const full = fullEventData(event, h.service.deps.secrets) as { document: Record<string, unknown> };
    expect(full.document).toMatchObject({
      id: doc.id,
      status: 'approved',
      download_url: data.download_url,
      filename: data.filename,
      signature: (data as unknown as { signature: unknown }).signature,
    });
  });

  it('records the last action as the completion time, as the certificate prints it', async () => {
    const rows = await h.service.database
      .db('approvers')
      .where({ document_id: doc.id })
      .select<{ acted_at: Date }[]>('acted_at');
    const last = Math.max(...rows.map((r) => r.acted_at.getTime()));
    const row = await h.service.database
      .db('documents')
      .where({ id: doc.id })
      .first<{ completed_at: Date }>();
    expect(row.completed_at.getTime()).toBe(last);
  });
});
